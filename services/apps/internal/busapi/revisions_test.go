package busapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/apps/internal/apptest"
)

// An app's status and currentDeployId follow the deploys service's and the zone's events,
// whatever order they arrive in, and never move a deleted app.
func TestAppFollowsItsDeploys(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	account := apptest.NewAccount()
	app := s.CreateApp(account, map[string]any{"kind": "service"})
	appID, path := app["id"].(string), "/api/apps/"+app["slug"].(string)
	t0 := time.Now().UTC()
	at := func(sec int) *timestamppb.Timestamp { return timestamppb.New(t0.Add(time.Duration(sec) * time.Second)) }
	status := func(id string, st string, sec int, live bool) *deploysv1.DeployStatusChanged {
		return &deploysv1.DeployStatusChanged{DeployId: id, AppId: appID, AccountId: account, Status: st, ChangedAt: at(sec), AppHasLiveDeploy: live}
	}
	expect := func(wantStatus string, wantDeploy any) {
		t.Helper()
		got := s.Must(http.StatusOK, account, http.MethodGet, path, nil).Map(t)
		if got["status"] != wantStatus || got["currentDeployId"] != wantDeploy {
			t.Fatalf("status %v currentDeployId %v, want %s %v", got["status"], got["currentDeployId"], wantStatus, wantDeploy)
		}
	}
	h := s.Consumers.HandleRevision
	d1, d2, d3 := uuid.NewString(), uuid.NewString(), uuid.NewString()

	s.Deliver(h, deploysbus.KeyDeployStatusChanged, status(d1, "building", 1, false))
	expect("deploying", nil)
	s.Deliver(h, deploysbus.KeyDeployStatusChanged, status(d1, "failed", 2, false))
	expect("error", nil)
	s.Deliver(h, deploysbus.KeyDeployStatusChanged, status(d2, "building", 3, false))
	expect("deploying", nil)
	s.Deliver(h, deploysbus.KeyDeployLive, &deploysv1.DeployLive{DeployId: d2, AppId: appID, AccountId: account, LiveAt: at(5)})
	expect("running", d2)
	// A newer deploy failing leaves the serving one in place.
	s.Deliver(h, deploysbus.KeyDeployStatusChanged, status(d3, "failed", 6, true))
	expect("running", d2)
	s.Deliver(h, zonebus.KeyAppNapping, &zonev1.AppScaleChanged{AppId: appID, Napping: true, At: at(7)})
	expect("napping", d2)
	// A wake older than the nap arrives late and changes nothing; a newer one wakes it.
	s.Deliver(h, zonebus.KeyAppWoken, &zonev1.AppScaleChanged{AppId: appID, Napping: false, At: at(6)})
	expect("napping", d2)
	s.Deliver(h, zonebus.KeyAppWoken, &zonev1.AppScaleChanged{AppId: appID, Napping: false, At: at(8)})
	expect("running", d2)
	// A late live event of an older deploy never takes the app back.
	s.Deliver(h, deploysbus.KeyDeployLive, &deploysv1.DeployLive{DeployId: d1, AppId: appID, AccountId: account, LiveAt: at(4)})
	expect("running", d2)

	s.Must(http.StatusOK, account, http.MethodDelete, path, nil)
	s.Deliver(h, deploysbus.KeyDeployLive, &deploysv1.DeployLive{DeployId: d3, AppId: appID, AccountId: account, LiveAt: at(9)})
	s.Must(http.StatusNotFound, account, http.MethodGet, path, nil)
}

// The app's framework is its live deploy's, as the deploys service's live events say:
// static at create, the framework a deploy showed once it is live, back to static when a
// live deploy shows none, and untouched by a late event of an older deploy.
func TestAppFrameworkFollowsItsLiveDeploy(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	account := apptest.NewAccount()
	app := s.CreateApp(account, nil)
	appID, path := app["id"].(string), "/api/apps/"+app["slug"].(string)
	t0 := time.Now().UTC()
	h := s.Consumers.HandleRevision
	live := func(sec int, framework string) string {
		id := uuid.NewString()
		s.Deliver(h, deploysbus.KeyDeployLive, &deploysv1.DeployLive{DeployId: id, AppId: appID, AccountId: account,
			LiveAt: timestamppb.New(t0.Add(time.Duration(sec) * time.Second)), Framework: framework})
		return id
	}
	expect := func(want string, deploy string) {
		t.Helper()
		got := s.Must(http.StatusOK, account, http.MethodGet, path, nil).Map(t)
		if got["framework"] != want || got["currentDeployId"] != deploy {
			t.Fatalf("framework %v currentDeployId %v, want %s %s", got["framework"], got["currentDeployId"], want, deploy)
		}
	}
	if app["framework"] != "static" {
		t.Fatalf("new app: framework %v", app["framework"])
	}
	d1 := live(1, "vite")
	expect("vite", d1)
	d2 := live(2, "next")
	expect("next", d2)
	live(0, "astro") // a late event of an older deploy
	expect("next", d2)
	d3 := live(3, "static")
	expect("static", d3)
	d4 := live(4, "vite") // a rollback to d1 carries d1's framework
	expect("vite", d4)
	d5 := live(5, "") // from a deploys service older than the field: the app keeps its framework
	expect("vite", d5)
}
