package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/contract/access"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// callAs sends method path (with a JSON body when one is given) as the gateway would for
// caller and decodes the JSON answer.
func callAs(t *testing.T, r *testinfra.Running, caller callerid.Caller, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, r.URL+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	callerid.Sign([]byte(r.Env["GATEWAY_SIGNING_KEY"]), req.Header.Set, caller, method, req.Host, path, time.Now())
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// auditEntries are the audit entries the service has put in its outbox, oldest first.
func auditEntries(t *testing.T, r *testinfra.Running) []*auditv1.EntryRecorded {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, r.Env["DATABASES_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, auditbus.Key("databases"))
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*auditv1.EntryRecorded, 0, len(bodies))
	for _, b := range bodies {
		var e auditv1.EntryRecorded
		if err := proto.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, &e)
	}
	return out
}

// A team's database through its members' roles: each change commits one audit entry with
// it; a developer's delete and a viewer's dump download are refused (and the refusal is an
// entry) with nothing changed; a stranger gets 404 and leaves no entry.
func TestDatabaseRolesAndAudit(t *testing.T) {
	w := &world{apps: map[[2]string]*appsv1.AppCreated{}}
	team := uuid.NewString()
	member := func(role access.Role) callerid.Caller {
		acc := uuid.NewString()
		return callerid.Caller{AccountID: acc, UserID: uuid.NewString(), TokenKind: callerid.KindSession, TokenID: uuid.NewString(), ClientIP: "192.0.2.7",
			Teams: callerid.EncodeTeams([]access.Membership{
				{TeamID: acc, Slug: "own-" + acc[:8], Role: access.Owner, Personal: true},
				{TeamID: team, Slug: "crew", Role: role},
			})}
	}
	owner, admin, developer, viewer := member(access.Owner), member(access.Admin), member(access.Developer), member(access.Viewer)
	stranger := callerid.Caller{AccountID: uuid.NewString(), UserID: uuid.NewString(), TokenKind: callerid.KindSession, TokenID: uuid.NewString()}
	r := testinfra.Service{Name: "databases", Serve: serve}.Start(t)
	w.serve(t, r.Env)
	a := w.app(team, "api", "service")

	// want checks the newest entry and that it is the n-th.
	want := func(n int, action, outcome string, who callerid.Caller) *auditv1.EntryRecorded {
		t.Helper()
		es := auditEntries(t, r)
		if len(es) != n {
			for _, e := range es {
				t.Logf("entry %s %s %s", e.GetAction(), e.GetOutcome(), e.GetTarget())
			}
			t.Fatalf("%d audit entries, want %d", len(es), n)
		}
		e := es[n-1]
		if e.GetAction() != action || e.GetOutcome() != outcome || e.GetTeamId() != team || e.GetApp() != "api" ||
			e.GetUserId() != who.UserID || e.GetActorType() != auditbus.ActorUser || e.GetIp() != who.ClientIP || e.GetAt() == nil {
			t.Fatalf("entry %v, want %s %s by %s", e, action, outcome, who.UserID)
		}
		return e
	}

	status, body := callAs(t, r, admin, "POST", "/api/apps/api/database", nil)
	if status != 202 {
		t.Fatalf("create: %d %v", status, body)
	}
	id := body["id"].(string)
	if e := want(1, "database.create", auditbus.OutcomeSuccess, admin); e.GetTarget() != "apps/api/database" {
		t.Fatalf("target %q", e.GetTarget())
	}
	// A read leaves no entry; a stranger's 404 is not the team's to see.
	if status, _ := callAs(t, r, viewer, "GET", "/api/apps/api/database", nil); status != 200 {
		t.Fatalf("viewer reads: %d", status)
	}
	for _, p := range []struct{ method, path string }{{"GET", "/api/apps/api/database"}, {"DELETE", "/api/apps/api/database"}, {"POST", "/api/apps/api/database/dumps"}} {
		if status, body := callAs(t, r, stranger, p.method, p.path, nil); status != 404 || body["error"] != "not found" {
			t.Fatalf("stranger %s %s: %d %v", p.method, p.path, status, body)
		}
	}
	want(1, "database.create", auditbus.OutcomeSuccess, admin)

	publishAs(t, r.Env["BUS_NAMESPACE"], bus.ZonePrincipal("local"), zonebus.KeyDatabaseReady,
		&zonev1.DatabaseChanged{DatabaseId: id, AppId: a.GetAppId(), Zone: "local", At: timestamppb.Now()})
	testinfra.Eventually(t, 20*time.Second, "the database ready", func() bool {
		_, b := callAs(t, r, viewer, "GET", "/api/apps/api/database", nil)
		return b["status"] == "ready"
	})

	if status, body := callAs(t, r, admin, "POST", "/api/apps/api/database/credentials/rotate", nil); status != 202 {
		t.Fatalf("rotate: %d %v", status, body)
	}
	want(2, "database.rotate", auditbus.OutcomeSuccess, admin)

	status, body = callAs(t, r, developer, "POST", "/api/apps/api/database/dumps", nil)
	if status != 202 {
		t.Fatalf("dump: %d %v", status, body)
	}
	dumpID := body["id"].(string)
	want(3, "database.dump", auditbus.OutcomeSuccess, developer)
	publishAs(t, r.Env["BUS_NAMESPACE"], bus.ZonePrincipal("local"), zonebus.KeyDatabaseDumped,
		&zonev1.DatabaseDumped{DatabaseId: id, DumpId: dumpID, Zone: "local", Ok: true, SizeBytes: 1024, At: timestamppb.Now()})
	testinfra.Eventually(t, 20*time.Second, "the dump succeeded", func() bool {
		return count(t, r, `SELECT count(*) FROM dumps WHERE id = $1 AND status = 'succeeded'`, dumpID) == 1
	})

	// A viewer may list dumps but not download one: its contents are a developer's.
	status, body = callAs(t, r, viewer, "GET", "/api/apps/api/database/dumps/"+dumpID+"/download", nil)
	if status != 403 || body["code"] != access.CodeInsufficientRole || body["error"] != access.CodeInsufficientRole || body["requiredRole"] != "developer" {
		t.Fatalf("viewer download: %d %v", status, body)
	}
	if e := want(4, "read", auditbus.OutcomeDenied, viewer); e.GetMetadata()["code"] != access.CodeInsufficientRole {
		t.Fatalf("denied entry %v", e)
	}

	status, body = callAs(t, r, admin, "POST", "/api/apps/api/database/restores", map[string]string{"dumpId": dumpID})
	if status != 202 {
		t.Fatalf("restore: %d %v", status, body)
	}
	want(5, "database.restore", auditbus.OutcomeSuccess, admin)

	// A developer may not delete the database: refused, recorded, and it is still there.
	status, body = callAs(t, r, developer, "DELETE", "/api/apps/api/database", nil)
	if status != 403 || body["code"] != access.CodeInsufficientRole || body["requiredRole"] != "admin" {
		t.Fatalf("developer delete: %d %v", status, body)
	}
	if e := want(6, "database.delete", auditbus.OutcomeDenied, developer); e.GetMetadata()["required"] != "admin" {
		t.Fatalf("denied entry %v", e)
	}
	if _, b := callAs(t, r, viewer, "GET", "/api/apps/api/database", nil); b["status"] != "ready" {
		t.Fatalf("after a refused delete: %v", b)
	}

	status, body = callAs(t, r, owner, "DELETE", "/api/apps/api/database", nil)
	if status != 202 || body["status"] != "deleting" {
		t.Fatalf("owner delete: %d %v", status, body)
	}
	want(7, "database.delete", auditbus.OutcomeSuccess, owner)
}
