package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
)

// auditEntries decodes the audit entries the service has put in its outbox, oldest first.
func (e *env) auditEntries() []*auditv1.EntryRecorded {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, auditbus.Key("deploys"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []*auditv1.EntryRecorded
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			e.t.Fatal(err)
		}
		m := &auditv1.EntryRecorded{}
		if err := proto.Unmarshal(body, m); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// newEntry is the one entry a request added since there were before; the test fails on none
// or several.
func (e *env) newEntry(before int) *auditv1.EntryRecorded {
	e.t.Helper()
	all := e.auditEntries()
	if len(all) != before+1 {
		e.t.Fatalf("%d audit entries added, want one: %v", len(all)-before, all[before:])
	}
	return all[before]
}

func (e *env) expectEntry(before int, action, target, app string) *auditv1.EntryRecorded {
	e.t.Helper()
	got := e.newEntry(before)
	if got.GetAction() != action || got.GetOutcome() != auditbus.OutcomeSuccess || got.GetTarget() != target ||
		got.GetApp() != app || got.GetTeamId() != e.account || got.GetUserId() != "u" || got.GetActorType() != auditbus.ActorUser {
		e.t.Fatalf("entry %v, want %s of %s on %s by u, a success in team %s", got, action, target, app, e.account)
	}
	return got
}

// Each change the deploys routes make commits exactly one audit entry, naming what it made.
func TestChangesAreAudited(t *testing.T) {
	e := newEnv(t, songbirdPlan)
	e.addApp(e.account, "svc", "service")
	n := len(e.auditEntries())
	live := e.deployImage("svc", `{"web":"serve","worker":"work"}`)
	got := e.expectEntry(n, "deploy.create", "deploy/"+live, "svc")
	if got.GetMetadata()["kind"] != "image" {
		t.Fatalf("metadata %v", got.GetMetadata())
	}
	e.liveWith(live, "web", "serve", "worker", "work")

	n = len(e.auditEntries())
	building := e.deployImage("svc", "")
	e.expectEntry(n, "deploy.create", "deploy/"+building, "svc")
	n++
	if status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys/"+building+"/cancel", ""); status != http.StatusOK {
		t.Fatalf("cancel: %d %v", status, body)
	}
	e.expectEntry(n, "deploy.cancel", "deploy/"+building, "svc")
	n++
	status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys/"+live+"/rollback", "")
	if status != http.StatusCreated {
		t.Fatalf("rollback: %d %v", status, body)
	}
	got = e.expectEntry(n, "deploy.rollback", "deploy/"+body["id"].(string), "svc")
	if got.GetMetadata()["rollbackOf"] != live {
		t.Fatalf("metadata %v", got.GetMetadata())
	}
	e.liveWith(body["id"].(string), "web", "serve", "worker", "work")
	n++

	if status, _, out := e.patchFormation(e.account, "svc", `{"updates":[{"type":"worker","quantity":2},{"type":"web","quantity":1}]}`); status != http.StatusOK {
		t.Fatalf("scale: %d %v", status, out)
	}
	got = e.expectEntry(n, "formation.scale", "apps/svc/formation", "svc")
	if md := got.GetMetadata(); md["types"] != "worker,web" || md["quantities"] != "worker=2,web=1" {
		t.Fatalf("metadata %v", md)
	}
	n++

	e.addCron("svc", `{"name":"nightly","schedule":"30 2 * * *","command":"bin/report SECRET=x"}`)
	e.expectEntry(n, "cron.create", "cron/nightly", "svc")
	n++
	if status, out := e.cronCall("PATCH", "/api/apps/svc/crons/nightly", `{"enabled":false}`); status != http.StatusOK {
		t.Fatalf("cron update: %d %v", status, out)
	}
	e.expectEntry(n, "cron.update", "cron/nightly", "svc")
	n++
	status, out := e.cronCall("POST", "/api/apps/svc/crons/nightly/runs", "")
	if status != http.StatusCreated {
		t.Fatalf("cron run: %d %v", status, out)
	}
	if got := e.expectEntry(n, "cron.run", "cron/nightly", "svc"); got.GetMetadata()["runId"] != out["id"] {
		t.Fatalf("metadata %v, run %v", got.GetMetadata(), out["id"])
	}
	n++
	if status, out := e.cronCall("DELETE", "/api/apps/svc/crons/nightly", ""); status != http.StatusNoContent {
		t.Fatalf("cron delete: %d %v", status, out)
	}
	e.expectEntry(n, "cron.delete", "cron/nightly", "svc")
	n++

	// A static upload: the slot it holds while streaming commits apart, the entry with the
	// deploy.
	e.addApp(e.account, "site", "static")
	id := e.deployStatic("site", "<h1>hi</h1>")
	e.expectEntry(n+0, "deploy.create", "deploy/"+id, "site")
	n++

	// Reads and refusals of the use cases leave nothing: a list, a cancel of a live deploy,
	// an upload over the plan's size after its slot was taken (its length not declared).
	e.request(e.account, "GET", "/api/apps/svc/deploys", "", nil, 0)
	if status, _, _ := e.postJSON(e.account, "/api/apps/svc/deploys/"+live+"/cancel", ""); status != http.StatusConflict {
		t.Fatalf("cancel of a live deploy: %d", status)
	}
	ct, big := multipartBody(file("index.html", strings.Repeat("x", int(songbirdPlan.UploadBytes)+1)))
	if status, body, _ := e.request(e.account, "POST", "/api/apps/site/deploys", ct, bytes.NewReader(big), -1); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized upload: %d %v", status, body)
	}
	if all := e.auditEntries(); len(all) != n {
		t.Fatalf("entries after reads and failures: %v", all[n:])
	}

	// The same image and environment again: nothing new, yet the ask is logged.
	if status, body, _ := e.postJSON(e.account, "/api/apps/svc/deploys", `{"image":"`+imageRef()+`","processes":{"web":"serve","worker":"work"}}`); status != http.StatusOK {
		t.Fatalf("unchanged deploy: %d %v", status, body)
	}
	if got := e.newEntry(n); got.GetAction() != "deploy.create" || got.GetMetadata()["unchanged"] != "true" {
		t.Fatalf("unchanged deploy's entry %v", got)
	}
}

// member signs as a member of the env's team (its id is e.account) with role, through a
// token of scope ("" full) pinned to apps ("" none).
func (e *env) member(role access.Role, scope, apps string) callerid.Caller {
	kind := callerid.KindSession
	if scope != "" || apps != "" {
		kind = callerid.KindAPI
	}
	teams := callerid.EncodeTeams([]access.Membership{
		{TeamID: uuid.NewString(), Slug: "mine", Role: access.Owner, Personal: true},
		{TeamID: e.account, Slug: "acme", Role: role},
	})
	return callerid.Caller{AccountID: uuid.NewString(), UserID: "member", TokenKind: kind, TokenID: "tok1", Teams: teams, Scope: scope, Apps: apps, ClientIP: "203.0.113.9"}
}

// A member's role and token decide what they may do in the team's apps; a refusal of the
// team's own member is logged, a stranger's 404 is not.
func TestRolesScopesAndPins(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "svc", "service")
	e.addApp(e.account, "other", "service")
	e.addApp(e.account, "site", "static")
	image := `{"image":"` + imageRef() + `","forceRestart":true}`
	deploy := func(c callerid.Caller, slug string) (int, map[string]any) {
		t.Helper()
		status, body, _ := e.requestAs(c, "POST", "/api/apps/"+slug+"/deploys", "application/json", strings.NewReader(image), int64(len(image)))
		return status, body
	}

	// A viewer reads, and is refused a deploy with the role it takes, in the log.
	viewer := e.member(access.Viewer, "", "")
	if status, body, _ := e.requestAs(viewer, "GET", "/api/apps/svc/deploys", "", nil, 0); status != http.StatusOK {
		t.Fatalf("viewer lists: %d %v", status, body)
	}
	if status, _, _ := e.requestAs(viewer, "GET", "/api/apps/ghost/deploys", "", nil, 0); status != http.StatusNotFound || e.closed {
		t.Fatalf("a 404 without a body: %d, connection closed %v", status, e.closed)
	}
	n, rows := len(e.auditEntries()), e.rows()
	status, body := deploy(viewer, "svc")
	if status != http.StatusForbidden || body["code"] != "insufficient_role" || body["error"] != "insufficient_role" || body["requiredRole"] != "developer" {
		t.Fatalf("viewer deploys: %d %v", status, body)
	}
	got := e.newEntry(n)
	if got.GetOutcome() != auditbus.OutcomeDenied || got.GetAction() != "deploy.create" || got.GetTeamId() != e.account ||
		got.GetUserId() != "member" || got.GetApp() != "svc" || got.GetIp() != "203.0.113.9" || got.GetMetadata()["code"] != "insufficient_role" {
		t.Fatalf("denied entry %v", got)
	}
	if e.rows() != rows {
		t.Fatal("a refused deploy left a deploy")
	}
	// Refused before a byte of an upload is read: the connection closes behind it.
	ct, up := multipartBody(file("index.html", "hi"))
	status, _, _ = e.requestAs(viewer, "POST", "/api/apps/site/deploys", ct, bytes.NewReader(up), int64(len(up)))
	if status != http.StatusForbidden || !e.closed || e.rows() != rows {
		t.Fatalf("viewer's upload: %d, connection closed %v", status, e.closed)
	}

	// A read token is refused a deploy for its scope, whatever its creator's role.
	n = len(e.auditEntries())
	status, body = deploy(e.member(access.Developer, "read", ""), "svc")
	if status != http.StatusForbidden || body["code"] != "insufficient_scope" || body["requiredScope"] != "deploy" {
		t.Fatalf("read token deploys: %d %v", status, body)
	}
	if got := e.newEntry(n); got.GetOutcome() != auditbus.OutcomeDenied || got.GetActorType() != auditbus.ActorToken || got.GetTokenId() != "tok1" {
		t.Fatalf("denied entry %v", got)
	}

	// A stranger learns nothing, and the team's log does not hear of them.
	n, rows = len(e.auditEntries()), e.rows()
	stranger := callerid.Caller{AccountID: uuid.NewString(), UserID: "stranger", TokenKind: callerid.KindSession}
	for _, path := range []string{"/api/apps/svc/deploys", "/api/apps/svc/formation", "/api/apps/svc/crons"} {
		if status, body, _ := e.requestAs(stranger, "GET", path, "", nil, 0); status != http.StatusNotFound {
			t.Fatalf("stranger GET %s: %d %v", path, status, body)
		}
	}
	if status, body := deploy(stranger, "svc"); status != http.StatusNotFound || body["error"] != "not found" {
		t.Fatalf("stranger deploys: %d %v", status, body)
	}
	if len(e.auditEntries()) != n || e.rows() != rows {
		t.Fatal("a stranger's attempt left an entry or a deploy")
	}

	// A deploy token pinned to svc deploys svc and finds no other app.
	pinned := e.member(access.Developer, "deploy", "svc")
	if status, body := deploy(pinned, "svc"); status != http.StatusCreated {
		t.Fatalf("pinned token deploys its app: %d %v", status, body)
	}
	if got := e.newEntry(n); got.GetOutcome() != auditbus.OutcomeSuccess || got.GetActorType() != auditbus.ActorToken || got.GetTeamId() != e.account {
		t.Fatalf("entry %v", got)
	}
	n++
	if status, body := deploy(pinned, "other"); status != http.StatusNotFound {
		t.Fatalf("pinned token deploys another app: %d %v", status, body)
	}
	if status, _, _ := e.requestAs(pinned, "GET", "/api/apps/other/deploys", "", nil, 0); status != http.StatusNotFound {
		t.Fatalf("pinned token lists another app: %d", status)
	}
	// Scaling takes write: a deploy token is refused it.
	scale := `{"updates":[{"type":"web","quantity":1}]}`
	status, body, _ = e.requestAs(pinned, "PATCH", "/api/apps/svc/formation", "application/json", strings.NewReader(scale), int64(len(scale)))
	if status != http.StatusForbidden || body["requiredScope"] != "write" {
		t.Fatalf("deploy token scales: %d %v", status, body)
	}
	if len(e.auditEntries()) != n+1 {
		t.Fatal("the refused scale was not logged")
	}

	// A developer of the team deploys as the team: the deploy counts against the team.
	status, body = deploy(e.member(access.Developer, "", ""), "svc")
	if status != http.StatusCreated || body["appId"] == nil {
		t.Fatalf("developer deploys: %d %v", status, body)
	}
}
