package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// busyCores keeps every core of the machine busy with a shell busy-loop until the test ends,
// so the races the consistency rules close are raced for real: on a quiet machine an event
// usually wins them.
func busyCores(t *testing.T) {
	t.Helper()
	for range max(2, runtime.NumCPU()) {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("busy loop: %v", err)
		}
		t.Cleanup(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
	}
}

// appRoute is one route naming an app, as a caller reads it right after the create.
type appRoute struct {
	name string
	call func(t *testing.T, s *harness.Stack, token, slug string) *harness.Response
	ok   int
}

var appRoutes = []appRoute{
	{"logs", func(t *testing.T, s *harness.Stack, token, slug string) *harness.Response {
		return s.Get(t, "/api/apps/"+slug+"/logs", token)
	}, http.StatusOK},
	{"deploys list", func(t *testing.T, s *harness.Stack, token, slug string) *harness.Response {
		return s.Get(t, "/api/apps/"+slug+"/deploys", token)
	}, http.StatusOK},
	{"domains list", func(t *testing.T, s *harness.Stack, token, slug string) *harness.Response {
		return s.Get(t, "/api/apps/"+slug+"/domains", token)
	}, http.StatusOK},
	{"env list", func(t *testing.T, s *harness.Stack, token, slug string) *harness.Response {
		return s.Get(t, "/api/apps/"+slug+"/env", token)
	}, http.StatusOK},
	{"deploy create", func(t *testing.T, s *harness.Stack, token, slug string) *harness.Response {
		return deployFiles(t, s, token, slug, sitePart{"index.html", "hello " + slug})
	}, http.StatusCreated},
}

// An app that POST /api/apps returned is found by every route at once, however busy the
// machine (the services that have not yet seen its created event ask the apps service), and
// a deleted app is 404 on every route within one second.
func TestReadYourWritesAcrossServices(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "ryw")
	busyCores(t)

	const loops = 20
	notFound := map[string]int{}
	var slowest time.Duration
	for i := range loops {
		slug := createApp(t, s, a.Token, "static")
		// Every route at once, the moment the create answered.
		results := make([]*harness.Response, len(appRoutes))
		var wg sync.WaitGroup
		for j, r := range appRoutes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[j] = r.call(t, s, a.Token, slug)
			}()
		}
		wg.Wait()
		for j, r := range appRoutes {
			if results[j].Status == http.StatusNotFound {
				notFound[r.name]++
			}
			if results[j].Status != r.ok {
				t.Errorf("loop %d, %s right after the create: %d %s", i, r.name, results[j].Status, results[j].Body)
			}
		}

		if r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/apps/" + slug, Token: a.Token}); r.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		deleted := time.Now()
		for _, r := range appRoutes {
			for {
				resp := r.call(t, s, a.Token, slug)
				if resp.Status == http.StatusNotFound {
					break
				}
				if time.Since(deleted) > time.Second {
					t.Fatalf("loop %d, %s still answers %d more than a second after the delete: %s", i, r.name, resp.Status, resp.Body)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		slowest = max(slowest, time.Since(deleted))
	}
	for _, r := range appRoutes {
		if notFound[r.name] != 0 {
			t.Errorf("%s: %d of %d reads right after a create answered 404", r.name, notFound[r.name], loops)
		}
	}
	t.Logf("%d create-then-read loops on %d routes with every core busy: 404s %v; slowest delete to 404 everywhere %v", loops, len(appRoutes), notFound, slowest)
}

// The API says live, and the app's currentDeployId moves, only once the edge serves the
// revision: deploy, deploy, rollback, twenty times, with every core busy, reading the edge the
// moment each answer changes.
func TestLiveMeansServedByTheEdge(t *testing.T) {
	s := defaultStack(t)
	busyCores(t)

	const rounds = 20
	changes := 0
	for round := range rounds {
		// An account per round keeps the polling below inside each operation's read limit.
		a := s.NewAccount(t, fmt.Sprintf("live%d", round))
		slug := createApp(t, s, a.Token, "static")
		first := fmt.Sprintf("round %d first", round)
		second := fmt.Sprintf("round %d second", round)

		r := deployFiles(t, s, a.Token, slug, sitePart{"index.html", first})
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		d1 := r.Map(t)["id"].(string)
		watchLive(t, s, a.Token, slug, d1, first)

		r = deployFiles(t, s, a.Token, slug, sitePart{"index.html", second})
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		watchLive(t, s, a.Token, slug, r.Map(t)["id"].(string), second)

		r = s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys/" + d1 + "/rollback", Token: a.Token})
		if r.Status != http.StatusCreated {
			t.Fatalf("rollback: %d %s", r.Status, r.Body)
		}
		watchLive(t, s, a.Token, slug, r.Map(t)["id"].(string), first)
		changes += 3
	}
	t.Logf("%d deploys and rollbacks: the edge served each one the moment the API said so", changes)
}

// watchLive polls the deploy and the app until the API says the deploy is live and the app's
// current deploy; at each of those two first sightings the edge must already serve want.
func watchLive(t *testing.T, s *harness.Stack, token, slug, id, want string) {
	t.Helper()
	sawLive, sawCurrent := false, false
	deadline := time.Now().Add(60 * time.Second)
	for !sawLive || !sawCurrent {
		if time.Now().After(deadline) {
			t.Fatalf("deploy %s: live %v, current %v after a minute", id, sawLive, sawCurrent)
		}
		if !sawLive {
			d := s.Get(t, "/api/apps/"+slug+"/deploys/"+id, token)
			if d.Status != http.StatusOK {
				t.Fatalf("get deploy: %d %s", d.Status, d.Body)
			}
			switch st := d.Map(t)["status"]; st {
			case "live":
				sawLive = true
				if status, body := edgeGet(t, s, slug, "/"); status != http.StatusOK || body != want {
					t.Fatalf("deploy %s says live while the edge answers %d %q, want %q", id, status, body, want)
				}
			case "building", "releasing":
			default:
				t.Fatalf("deploy %s ended %v: %s", id, st, d.Body)
			}
		}
		if !sawCurrent {
			app := s.Get(t, "/api/apps/"+slug, token)
			if app.Status != http.StatusOK {
				t.Fatalf("get app: %d %s", app.Status, app.Body)
			}
			if app.Map(t)["currentDeployId"] == id {
				sawCurrent = true
				if status, body := edgeGet(t, s, slug, "/"); status != http.StatusOK || body != want {
					t.Fatalf("the app names %s current while the edge answers %d %q, want %q", id, status, body, want)
				}
			}
		}
		time.Sleep(40 * time.Millisecond)
	}
}
