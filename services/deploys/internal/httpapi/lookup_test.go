package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/access"
	"tori.dev/pkg/health"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/httpapi"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/usecase"
)

// appsOwner plays the apps service: it knows some apps and counts the questions.
type appsOwner struct {
	mu    sync.Mutex
	apps  map[string]usecase.App // account/slug → app
	err   error
	asked int
}

func (o *appsOwner) LookupApp(_ context.Context, accountID, slug string) (usecase.App, time.Time, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked++
	if o.err != nil {
		return usecase.App{}, time.Time{}, false, o.err
	}
	a, ok := o.apps[accountID+"/"+slug]
	return a, time.Now(), ok, nil
}

func (o *appsOwner) questions() int { o.mu.Lock(); defer o.mu.Unlock(); return o.asked }

// withApps rebuilds e's service so that it asks owner for apps its copy lacks.
func (e *env) withApps(owner usecase.AppSource) {
	objs, err := objects.NewLocal(e.objDir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.svc = usecase.New(usecase.Deps{Store: store.New(e.pool), Objects: objs, Plans: plans{p: testPlan}, Env: e.env, Apps: owner, Now: e.clock.Now})
	e.app = httpapi.New(httpapi.Deps{Deploys: e.svc, SigningKey: signingKey, DB: e.pool, Health: health.NewIdentity("deploys", "test")})
}

// An app whose created event has not arrived is asked of its owner once, kept as the event
// would keep it, and served by every route at once; the event arriving afterwards changes
// nothing, and its delete still wins.
func TestAppUnknownToTheCopyIsAskedOfItsOwner(t *testing.T) {
	e := newEnv(t, testPlan)
	fresh := usecase.App{ID: uuid.NewString(), AccountID: e.account, Slug: "fresh", Kind: "static", Zone: "local"}
	owner := &appsOwner{apps: map[string]usecase.App{e.account + "/fresh": fresh}}
	e.withApps(owner)

	if status, _, _ := e.upload(e.account, "fresh", file("index.html", "hi")); status != http.StatusCreated {
		t.Fatalf("deploy to a just-created app: %d", status)
	}
	if status, body, _ := e.request(e.account, "GET", "/api/apps/fresh/deploys", "", nil, 0); status != 200 || len(body["list"].([]any)) != 1 {
		t.Fatalf("list: %d %v", status, body)
	}
	if owner.questions() != 1 {
		t.Fatalf("the owner was asked %d times, want once", owner.questions())
	}
	// The created event, late: the same write, harmless.
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.OnAppCreated(context.Background(), tx, fresh, e.clock.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error { return e.svc.OnAppDeleted(context.Background(), tx, fresh.ID) })
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := e.request(e.account, "GET", "/api/apps/fresh/deploys", "", nil, 0); status != 404 {
		t.Fatalf("deleted app: %d", status)
	}
}

func TestAppLookupAnswers(t *testing.T) {
	e := newEnv(t, testPlan)
	raced := usecase.App{ID: uuid.NewString(), AccountID: e.account, Slug: "raced", Kind: "static", Zone: "local"}
	// The delete was consumed before the lookup's answer is kept: it stays deleted.
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error { return e.svc.OnAppDeleted(context.Background(), tx, raced.ID) })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		owner  *appsOwner
		status int
	}{
		{"nobody has it", &appsOwner{}, http.StatusNotFound},
		{"apps unreachable", &appsOwner{err: fmt.Errorf("%w: no responder", deploy.ErrAppUnavailable)}, http.StatusServiceUnavailable},
		{"deleted meanwhile", &appsOwner{apps: map[string]usecase.App{e.account + "/raced": raced}}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.withApps(tc.owner)
			status, body, _ := e.request(e.account, "GET", "/api/apps/raced/deploys", "", nil, 0)
			if status != tc.status || tc.owner.questions() != 1 {
				t.Fatalf("%d %v after %d questions; want %d after one", status, body, tc.owner.questions(), tc.status)
			}
			if status == http.StatusServiceUnavailable && body["error"] != "service_unavailable" {
				t.Fatalf("503 body %v", body)
			}
		})
	}
}

// The gate asks the apps service for an app its copy lacks on behalf of each of the caller's
// teams, so a team's new app is found by a member who did not create it, at once.
func TestTeamAppUnknownToTheCopyIsAskedForTheCallersTeams(t *testing.T) {
	e := newEnv(t, testPlan)
	fresh := usecase.App{ID: uuid.NewString(), AccountID: e.account, Slug: "fresh", Kind: "static", Zone: "local"}
	owner := &appsOwner{apps: map[string]usecase.App{e.account + "/fresh": fresh}}
	e.withApps(owner)
	member := e.member(access.Developer, "", "")
	ct, body := multipartBody(file("index.html", "hi"))
	if status, out, _ := e.requestAs(member, "POST", "/api/apps/fresh/deploys", ct, bytes.NewReader(body), int64(len(body))); status != http.StatusCreated {
		t.Fatalf("a member deploys the team's new app: %d %v", status, out)
	}
	// Its personal team first, then the team that has it.
	if owner.questions() != 2 {
		t.Fatalf("the owner was asked %d times, want twice", owner.questions())
	}
	if status, _, _ := e.request(uuid.NewString(), "GET", "/api/apps/fresh/deploys", "", nil, 0); status != http.StatusNotFound {
		t.Fatalf("a stranger found the app: %d", status)
	}
}
