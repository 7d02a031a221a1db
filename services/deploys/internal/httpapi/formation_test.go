package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/billinghold"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// An image deploy's `processes` are checked before anything is kept, and reach the zone in
// its StartRevision with the plan's per-instance memory; start beside processes.web is
// refused.
func TestImageDeployDeclaresProcesses(t *testing.T) {
	e := newEnv(t, songbirdPlan)
	e.addApp(e.account, "svc", "service")
	img := imageRef()
	for _, tc := range []struct {
		name, body, message string
	}{
		{"start and web", `{"image":"` + img + `","start":"serve","processes":{"web":"serve","worker":"work"}}`, "processes.web and start both give the web command"},
		{"bad name", `{"image":"` + img + `","processes":{"Worker":"work"}}`, `name "Worker" must match`},
		{"empty command", `{"image":"` + img + `","processes":{"worker":""}}`, "processes.worker must be a command of 1 to 4096 bytes"},
		{"long command", `{"image":"` + img + `","processes":{"worker":"` + strings.Repeat("x", 4097) + `"}}`, "processes.worker must be a command"},
		{"too many types", `{"image":"` + img + `","processes":{` + manyTypes(21) + `}}`, "more than 20 process types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := e.rows()
			status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", tc.body)
			if status != http.StatusBadRequest || body["code"] != "invalid_parameter" || !strings.Contains(fmt.Sprint(body["message"]), tc.message) {
				t.Fatalf("%d %v, want 400 invalid_parameter saying %q", status, body, tc.message)
			}
			e.assertNothingBehind(rows)
		})
	}

	id := e.deployImage("svc", `{"worker":"work --queue mail","web":"serve"}`)
	start := e.startCommand(id)
	if ps := start.GetProcesses(); len(ps) != 2 || ps[0].GetName() != "web" || ps[0].GetCommand() != "serve" ||
		ps[1].GetName() != "worker" || ps[1].GetCommand() != "work --queue mail" {
		t.Fatalf("StartRevision.processes %v", start.GetProcesses())
	}
	if start.GetInstanceMemoryBytes() != 512<<20 {
		t.Fatalf("instance memory %d", start.GetInstanceMemoryBytes())
	}
	// start alone is not a web command of its own: it passes as before.
	status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"`+img+`","forceRestart":true,"start":"serve","processes":{"worker":"w"}}`)
	if status != http.StatusCreated {
		t.Fatalf("start beside a worker: %d %v", status, body)
	}
	// The same image and environment with other processes is a new revision, not the live one.
	e.liveWith(id, "web", "serve", "worker", "work --queue mail")
	same := `{"image":"` + img + `","processes":{"worker":"work --queue mail","web":"serve"}}`
	if status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", same); status != http.StatusOK || body["id"] != id {
		t.Fatalf("unchanged image and processes: %d %v", status, body)
	}
	changed := `{"image":"` + img + `","processes":{"worker":"work --queue sms","web":"serve"}}`
	if status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", changed); status != http.StatusCreated {
		t.Fatalf("changed processes: %d %v", status, body)
	}
	// A rollback sends the target's declarations again.
	status, body, _ = e.request(e.account, "POST", "/api/apps/svc/deploys/"+id+"/rollback", "", nil, 0)
	if status != http.StatusCreated {
		t.Fatalf("rollback: %d %v", status, body)
	}
	if got := e.startCommand(body["id"].(string)).GetProcesses(); len(got) != 2 || got[1].GetCommand() != "work --queue mail" {
		t.Fatalf("rollback's StartRevision.processes %v", got)
	}
}

// A plan copy without the process limits (billing has not announced them) is read with the
// smallest plan's: 256 MiB per instance, one instance per type.
func TestPlanWithoutProcessLimitsFallsBackToNestling(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	id := e.deployImage("svc", `{"web":"serve","worker":"work"}`)
	if got := e.startCommand(id).GetInstanceMemoryBytes(); got != 256<<20 {
		t.Fatalf("instance memory %d", got)
	}
	e.liveWith(id, "web", "serve", "worker", "work")
	status, _, body := e.patchFormation(e.account, "svc", `{"updates":[{"type":"worker","quantity":2}]}`)
	if status != http.StatusForbidden || body["code"] != "instances_per_process_limit" || body["limit"] != 1.0 || body["plan"] != "songbird" {
		t.Fatalf("worker=2 on an unannounced limit: %d %v", status, body)
	}
}

func manyTypes(n int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf(`"w%d":"run"`, i))
	}
	return strings.Join(parts, ",")
}

// The formation follows the deploys: the first one starts web at 1 and the rest at 0; a new
// deploy keeps the quantities of the types it still declares, drops the others and adds its
// new ones at 0; a rollback restores its target's declarations with the current quantities.
// Every change reaches the zone with a growing generation.
func TestFormationFollowsDeploysAndRollbacks(t *testing.T) {
	e := newEnv(t, songbirdPlan)
	appID := e.addApp(e.account, "svc", "service")
	if status, list, _ := e.formationOf(e.account, "svc"); status != 200 || len(list) != 0 {
		t.Fatalf("never deployed: %d %v", status, list)
	}

	first := e.deployImage("svc", `{"web":"serve","worker":"work"}`)
	e.readyWith(first, "web", "serve", "worker", "work")
	acts := e.activations()
	if len(acts) != 1 || formationString(acts[0].GetFormation()) != "web=1 worker=0" || acts[0].GetFormationGeneration() != 1 {
		t.Fatalf("first activation: %v", acts)
	}
	e.report(first, stepActive, "")
	// Once live, the formation is sent again (a scale made while switching reaches the zone).
	if s := e.scales(); len(s) != 1 || s[0].GetDeployId() != first || s[0].GetFormationGeneration() != 1 || s[0].GetAppId() != appID {
		t.Fatalf("after activation: %v", s)
	}
	_, list, _ := e.formationOf(e.account, "svc")
	if quantities(list) != "web=1/0 worker=0/0" || list[0]["command"] != "serve" || list[1]["command"] != "work" || list[0]["updatedAt"] != "2026-11-22T03:00:00.000Z" {
		t.Fatalf("first formation: %v", list)
	}

	e.clock.Advance(time.Minute)
	status, list, body := e.patchFormation(e.account, "svc", `{"updates":[{"type":"worker","quantity":3},{"type":"web","quantity":2}]}`)
	if status != 200 || quantities(list) != "web=2/0 worker=3/0" || list[1]["updatedAt"] != "2026-11-22T03:01:00.000Z" {
		t.Fatalf("scale: %d %v %v", status, list, body)
	}
	s := e.scales()
	if len(s) != 2 || s[1].GetDeployId() != first || formationString(s[1].GetFormation()) != "web=2 worker=3" || s[1].GetFormationGeneration() != 2 {
		t.Fatalf("scale command: %v", s)
	}
	if c := count(e.outboxKeys(), "deploys.deploy.created"); c != 1 {
		t.Fatalf("scaling made a deploy: %d created", c)
	}

	// A deploy that drops worker and adds mailer.
	second := e.deployImage("svc", `{"web":"serve --v2","mailer":"mail"}`)
	e.liveWith(second, "web", "serve --v2", "mailer", "mail")
	acts = e.activations()
	if last := acts[len(acts)-1]; formationString(last.GetFormation()) != "web=2 mailer=0" || last.GetFormationGeneration() != 3 {
		t.Fatalf("second activation: %v", last)
	}
	_, list, _ = e.formationOf(e.account, "svc")
	if quantities(list) != "web=2/0 mailer=0/0" || list[0]["command"] != "serve --v2" {
		t.Fatalf("second formation: %v", list)
	}

	// Rolling back to the first: its zone reports no declarations this time, so the target's
	// are used; web keeps 2, worker comes back at 0, mailer goes.
	status, body, _ = e.request(e.account, "POST", "/api/apps/svc/deploys/"+first+"/rollback", "", nil, 0)
	if status != http.StatusCreated {
		t.Fatalf("rollback: %d %v", status, body)
	}
	rb := body["id"].(string)
	e.liveWith(rb)
	acts = e.activations()
	if last := acts[len(acts)-1]; last.GetDeployId() != rb || formationString(last.GetFormation()) != "web=2 worker=0" || last.GetFormationGeneration() != 4 {
		t.Fatalf("rollback activation: %v", last)
	}
	_, list, _ = e.formationOf(e.account, "svc")
	if quantities(list) != "web=2/0 worker=0/0" || list[0]["command"] != "serve" || list[1]["command"] != "work" {
		t.Fatalf("rollback formation: %v", list)
	}
}

// A PATCH is one change: one bad entry, or a plan limit, leaves the formation and the zone as
// they were. Nestling scaling a worker to 2 is 403 with limit 1.
func TestFormationPatchIsAtomic(t *testing.T) {
	e := newEnv(t, nestlingPlan)
	e.addApp(e.account, "svc", "service")
	id := e.deployImage("svc", `{"web":"serve","worker":"work","clock":"tick"}`)
	e.liveWith(id, "web", "serve", "clock", "tick", "worker", "work")
	_, before, _ := e.formationOf(e.account, "svc")
	if quantities(before) != "web=1/0 clock=0/0 worker=0/0" {
		t.Fatalf("formation %v", before)
	}
	scalesBefore := len(e.scales())
	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprintf(`{"type":"t%d","quantity":0}`, i)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
		extra      map[string]any
	}{
		{"unknown type", `{"updates":[{"type":"worker","quantity":1},{"type":"mailer","quantity":1}]}`, 400, "unknown_process_type", map[string]any{"type": "mailer"}},
		{"negative", `{"updates":[{"type":"worker","quantity":1},{"type":"web","quantity":-1}]}`, 400, "invalid_parameter", nil},
		{"fraction", `{"updates":[{"type":"worker","quantity":1.5}]}`, 400, "invalid_parameter", nil},
		{"string", `{"updates":[{"type":"worker","quantity":"1"}]}`, 400, "invalid_parameter", nil},
		{"missing quantity", `{"updates":[{"type":"worker"}]}`, 400, "invalid_parameter", nil},
		{"missing type", `{"updates":[{"quantity":1}]}`, 400, "invalid_parameter", nil},
		{"empty", `{"updates":[]}`, 400, "invalid_parameter", nil},
		{"no updates", `{}`, 400, "invalid_parameter", nil},
		{"duplicate", `{"updates":[{"type":"worker","quantity":1},{"type":"worker","quantity":0}]}`, 400, "invalid_parameter", nil},
		{"too many", `{"updates":[` + strings.Join(many, ",") + `]}`, 400, "invalid_parameter", nil},
		{"not json", `{"updates":`, 400, "invalid_body", nil},
		{"worker=2 on nestling", `{"updates":[{"type":"worker","quantity":2}]}`, 403, "instances_per_process_limit", map[string]any{"limit": 1.0, "plan": "nestling"}},
		{"three instances on nestling", `{"updates":[{"type":"worker","quantity":1},{"type":"clock","quantity":1}]}`, 403, "instances_total_limit", map[string]any{"limit": 2.0, "plan": "nestling"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.patchFormation(e.account, "svc", tc.body)
			if status != tc.status || body["code"] != tc.code || body["error"] != tc.code || body["message"] == nil {
				t.Fatalf("%d %v, want %d %s", status, body, tc.status, tc.code)
			}
			for k, v := range tc.extra {
				if body[k] != v {
					t.Errorf("%s = %v, want %v", k, body[k], v)
				}
			}
			_, after, _ := e.formationOf(e.account, "svc")
			if quantities(after) != quantities(before) || len(e.scales()) != scalesBefore {
				t.Fatalf("a refused change changed something: %v, %d scale commands", after, len(e.scales()))
			}
		})
	}
	status, list, _ := e.patchFormation(e.account, "svc", `{"updates":[{"type":"worker","quantity":1}]}`)
	if status != 200 || quantities(list) != "web=1/0 clock=0/0 worker=1/0" {
		t.Fatalf("worker=1 on nestling: %d %v", status, list)
	}
}

// Under a hold that refuses deploys, growing any quantity is 402 billing_hold; lowering goes.
func TestFormationUnderHoldOnlyShrinks(t *testing.T) {
	e := newEnv(t, songbirdPlan)
	e.addApp(e.account, "svc", "service")
	id := e.deployImage("svc", `{"web":"serve","worker":"work"}`)
	e.liveWith(id, "web", "serve", "worker", "work")
	since := e.clock.Now().Add(-8 * 24 * time.Hour) // day 8: deploys refused
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error {
		return e.svc.SaveHold(context.Background(), tx, e.account, deploy.Hold{Active: true, Hold: billinghold.From(since), Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	status, _, body := e.patchFormation(e.account, "svc", `{"updates":[{"type":"web","quantity":0},{"type":"worker","quantity":1}]}`)
	hold, _ := body["hold"].(map[string]any)
	if status != http.StatusPaymentRequired || body["code"] != "billing_hold" || hold == nil || hold["stage"] != "deploys_refused" {
		t.Fatalf("growth under hold: %d %v", status, body)
	}
	if _, list, _ := e.formationOf(e.account, "svc"); quantities(list) != "web=1/0 worker=0/0" {
		t.Fatalf("a refused change changed the formation: %v", list)
	}
	status, list, body := e.patchFormation(e.account, "svc", `{"updates":[{"type":"web","quantity":0}]}`)
	if status != 200 || quantities(list) != "web=0/0 worker=0/0" {
		t.Fatalf("lowering under hold: %d %v %v", status, list, body)
	}
}

// Another account's app, an unknown one and a static one.
func TestFormationOwnershipAndStaticApps(t *testing.T) {
	e := newEnv(t, songbirdPlan)
	e.addApp(e.account, "svc", "service")
	e.addApp(e.account, "site", "static")
	other := uuid.NewString()
	e.addApp(other, "theirs", "service")
	id := e.deployImage("svc", `{"web":"serve","worker":"work"}`)
	e.liveWith(id, "web", "serve", "worker", "work")
	patch := `{"updates":[{"type":"worker","quantity":1}]}`

	for _, slug := range []string{"theirs", "nope"} {
		if status, _, body := e.formationOf(e.account, slug); status != 404 {
			t.Errorf("GET %s: %d %v", slug, status, body)
		}
		if status, _, body := e.patchFormation(e.account, slug, patch); status != 404 {
			t.Errorf("PATCH %s: %d %v", slug, status, body)
		}
	}
	// The owner of svc is not the other account.
	if status, _, body := e.patchFormation(other, "svc", patch); status != 404 {
		t.Errorf("PATCH svc by another account: %d %v", status, body)
	}
	if status, list, body := e.formationOf(e.account, "site"); status != 200 || list == nil || len(list) != 0 {
		t.Errorf("GET static: %d %v %v", status, list, body)
	}
	if status, _, body := e.patchFormation(e.account, "site", patch); status != http.StatusConflict || body["code"] != "not_a_service" {
		t.Errorf("PATCH static: %d %v", status, body)
	}
	if _, list, _ := e.formationOf(e.account, "svc"); quantities(list) != "web=1/0 worker=0/0" {
		t.Fatalf("refused requests changed the formation: %v", list)
	}
}

// An older deploy ready after a newer one was told to activate does not take the formation:
// its zone ignores the older revision, so the formation keeps following the newer one.
func TestFormationKeepsFollowingTheNewerDeploy(t *testing.T) {
	e := newEnv(t, songbirdPlan)
	e.addApp(e.account, "svc", "service")
	older := e.deployImage("svc", `{"web":"serve","worker":"old"}`)
	e.clock.Advance(time.Second)
	newer := e.deployImage("svc", `{"web":"serve","mailer":"new"}`)
	e.readyWith(newer, "web", "serve", "mailer", "new")
	e.readyWith(older, "web", "serve", "worker", "old")
	acts := e.activations()
	if len(acts) != 2 || acts[1].GetDeployId() != older || acts[1].GetFormationGeneration() != 1 {
		t.Fatalf("activations %v", acts)
	}
	_, list, _ := e.formationOf(e.account, "svc")
	if quantities(list) != "web=1/0 mailer=0/0" {
		t.Fatalf("formation %v", list)
	}
	if status, _, body := e.patchFormation(e.account, "svc", `{"updates":[{"type":"mailer","quantity":1}]}`); status != 200 {
		t.Fatalf("scale: %d %v", status, body)
	}
	if s := e.scales(); len(s) != 1 || s[0].GetDeployId() != newer || s[0].GetFormationGeneration() != 2 {
		t.Fatalf("scale command %v", s)
	}
}
