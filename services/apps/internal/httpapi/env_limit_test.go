package httpapi_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/env"
)

// An app holds at most env.MaxVarsPerApp variables: the 200th is created, the 201st is 403
// env_limit_reached naming the cap and the plan, while replacing or deleting one still works.
func TestEnvLimitAtTheEdge(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "svc", "kind": "service"})
	const path = "/api/apps/svc/env"
	for i := 1; i <= env.MaxVarsPerApp; i++ {
		s.Must(http.StatusCreated, acct, http.MethodPut, path, map[string]any{"key": fmt.Sprintf("VAR_%03d", i), "value": "v"})
	}

	r := s.Do(acct, http.MethodPut, path, map[string]any{"key": "VAR_201", "value": "v"})
	body := r.Map(t)
	if r.Status != http.StatusForbidden || body["error"] != "env_limit_reached" || body["code"] != "env_limit_reached" ||
		body["limit"] != float64(env.MaxVarsPerApp) || body["plan"] != "nestling" {
		t.Fatalf("201st variable: %d %v", r.Status, body)
	}
	var vars []map[string]any
	s.Must(http.StatusOK, acct, http.MethodGet, path, nil).JSON(t, &vars)
	if len(vars) != env.MaxVarsPerApp {
		t.Fatalf("%d variables stored, want %d: the refused one must not be half-written", len(vars), env.MaxVarsPerApp)
	}

	// At the cap a variable it holds can still be replaced...
	s.Must(http.StatusOK, acct, http.MethodPut, path, map[string]any{"key": "VAR_001", "value": "replaced"})
	// ...and one deleted makes room for one more.
	s.Must(http.StatusNoContent, acct, http.MethodDelete, path+"/VAR_002", nil)
	s.Must(http.StatusCreated, acct, http.MethodPut, path, map[string]any{"key": "VAR_201", "value": "v"})
	s.Must(http.StatusForbidden, acct, http.MethodPut, path, map[string]any{"key": "VAR_202", "value": "v"})
}

// Two new variables racing for the last place: exactly one is created.
func TestEnvLimitHoldsUnderConcurrentPuts(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "svc", "kind": "service"})
	const path = "/api/apps/svc/env"
	for i := 1; i < env.MaxVarsPerApp; i++ {
		s.Must(http.StatusCreated, acct, http.MethodPut, path, map[string]any{"key": fmt.Sprintf("VAR_%03d", i), "value": "v"})
	}
	const racers = 4
	statuses := make([]int, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = s.Do(acct, http.MethodPut, path, map[string]any{"key": fmt.Sprintf("RACE_%d", i), "value": "v"}).Status
		}()
	}
	wg.Wait()
	created, refused := 0, 0
	for _, st := range statuses {
		switch st {
		case http.StatusCreated:
			created++
		case http.StatusForbidden:
			refused++
		}
	}
	if created != 1 || refused != racers-1 {
		t.Fatalf("statuses %v: want one 201 and %d 403", statuses, racers-1)
	}
}
