package apps

import (
	"testing"
	"time"
)

func TestRevisionStateApply(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	id := func(s string) *string { return &s }
	fresh := RevisionState{Status: StatusDeploying, StatusAt: t0}
	live := RevisionState{Status: StatusRunning, StatusAt: at(10), CurrentDeployID: id("d1"), CurrentAt: at(10)}

	cases := []struct {
		name       string
		from       RevisionState
		ev         RevisionEvent
		wantStatus string
		wantDeploy string
	}{
		{"first deploy lands", fresh, RevisionEvent{Kind: DeployWentLive, DeployID: "d1", At: at(5)}, StatusRunning, "d1"},
		{"first deploy fails, nothing serves", fresh, RevisionEvent{Kind: DeployEnded, DeployID: "d1", At: at(5)}, StatusError, ""},
		{"a deploy after an error", RevisionState{Status: StatusError, StatusAt: at(5)}, RevisionEvent{Kind: DeployStarted, DeployID: "d2", At: at(6)}, StatusDeploying, ""},
		{"a newer deploy lands", live, RevisionEvent{Kind: DeployWentLive, DeployID: "d2", At: at(20)}, StatusRunning, "d2"},
		{"an older live event arrives late", live, RevisionEvent{Kind: DeployWentLive, DeployID: "d0", At: at(5)}, StatusRunning, "d1"},
		{"a later deploy fails while one serves", live, RevisionEvent{Kind: DeployEnded, DeployID: "d2", At: at(20), AppHasLiveDeploy: true}, StatusRunning, "d1"},
		{"a later deploy starts while one serves", live, RevisionEvent{Kind: DeployStarted, DeployID: "d2", At: at(20)}, StatusRunning, "d1"},
		{"the zone naps a live service", live, RevisionEvent{Kind: AppNapped, At: at(30)}, StatusNapping, "d1"},
		{"a nap reported before the deploy landed", fresh, RevisionEvent{Kind: AppNapped, At: at(30)}, StatusDeploying, ""},
		{"it wakes", RevisionState{Status: StatusNapping, StatusAt: at(30), CurrentDeployID: id("d1"), CurrentAt: at(10)}, RevisionEvent{Kind: AppWoke, At: at(40)}, StatusRunning, "d1"},
		{"a stale wake after a newer nap", RevisionState{Status: StatusNapping, StatusAt: at(30), CurrentDeployID: id("d1"), CurrentAt: at(10)}, RevisionEvent{Kind: AppWoke, At: at(25)}, StatusNapping, "d1"},
		{"a stale failure after the first deploy landed", live, RevisionEvent{Kind: DeployEnded, DeployID: "d0", At: at(5)}, StatusRunning, "d1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.from.Apply(tc.ev)
			deploy := ""
			if got.CurrentDeployID != nil {
				deploy = *got.CurrentDeployID
			}
			if got.Status != tc.wantStatus || deploy != tc.wantDeploy {
				t.Fatalf("got %s/%q, want %s/%q", got.Status, deploy, tc.wantStatus, tc.wantDeploy)
			}
		})
	}
}

// decisions.md: an app's framework is static until a deploy shows otherwise; it is the live
// deploy's, so a newer live deploy without one takes it back to static, and a rollback (a
// new deploy carrying its target's framework) brings the old one back.
func TestRevisionStateFramework(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	id := func(s string) *string { return &s }
	fresh := RevisionState{Status: StatusDeploying, StatusAt: t0, Framework: FrameworkStatic}
	vite := RevisionState{Status: StatusRunning, StatusAt: at(10), CurrentDeployID: id("d1"), CurrentAt: at(10), Framework: "vite"}
	live := func(deploy string, sec int, fw string) RevisionEvent {
		return RevisionEvent{Kind: DeployWentLive, DeployID: deploy, At: at(sec), Framework: fw}
	}

	for _, tc := range []struct {
		name string
		from RevisionState
		ev   RevisionEvent
		want string
	}{
		{"a new app is static", fresh, RevisionEvent{Kind: DeployStarted, DeployID: "d1", At: at(1)}, FrameworkStatic},
		{"the first deploy shows vite", fresh, live("d1", 5, "vite"), "vite"},
		{"a newer deploy shows next", vite, live("d2", 20, "next"), "next"},
		{"a newer deploy shows none: back to static", vite, live("d2", 20, FrameworkStatic), FrameworkStatic},
		{"a rollback to a static deploy", vite, live("d3", 30, FrameworkStatic), FrameworkStatic},
		{"an older live event arriving late changes nothing", vite, live("d0", 5, "astro"), "vite"},
		{"an event from before the field keeps the framework", vite, live("d2", 20, ""), "vite"},
		{"a deploy that is not live yet changes nothing", vite, RevisionEvent{Kind: DeployStarted, DeployID: "d2", At: at(20)}, "vite"},
		{"a deploy that failed changes nothing", vite, RevisionEvent{Kind: DeployEnded, DeployID: "d2", At: at(20), AppHasLiveDeploy: true}, "vite"},
		{"a nap changes nothing", vite, RevisionEvent{Kind: AppNapped, At: at(30)}, "vite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.from.Apply(tc.ev).Framework; got != tc.want {
				t.Fatalf("framework %q, want %q", got, tc.want)
			}
		})
	}
}
