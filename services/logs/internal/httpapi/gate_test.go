package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/contract/access"
	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

// Every route the service serves under /api, the stream included, has the access gate in
// front of its handler.
func TestEveryRouteIsGated(t *testing.T) {
	db := logstest.NewDB(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := httpapi.New(httpapi.Deps{
		Reader:   usecase.NewReader(db.Store, db.Store, nil, time.Now),
		Streamer: usecase.NewStreamer(db.Store, nil, db.Store, time.Now, time.Second),
		Apps:     usecase.NewAppFinder(db.Store, nil, quiet), DB: db.Pool,
		Drains:     drains.NewService(db.Store, nil, nil, drains.Deliverer{}, time.Now),
		SigningKey: signingKey, Identity: health.NewIdentity("logs", "test"), Log: quiet,
	})
	bad, checked := accessgate.Ungated(app)
	if len(bad) > 0 {
		t.Fatalf("routes without the access gate: %v", bad)
	}
	// /logs and /logs/stream, each as GET and HEAD; the drains' list and one (GET and
	// HEAD), POST, DELETE and test.
	if checked != 11 {
		t.Fatalf("%d /api routes walked, want 11", checked)
	}

	// The walk itself finds a route added without the gate.
	bare := fiber.New()
	bare.Get("/api/apps/:slug/logs", func(c *fiber.Ctx) error { return nil })
	bare.Get("/api/apps/:slug/logs/tail", (*accessgate.Gate)(nil).Check, func(c *fiber.Ctx) error { return nil })
	if bad, _ := accessgate.Ungated(bare); len(bad) != 4 {
		t.Fatalf("an ungated app passed the walk: %v", bad)
	}
}

// getAs reads slug's logs signed as caller.
func (e *env) getAs(t *testing.T, caller callerid.Caller, path string) response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	callerid.Sign(signingKey, req.Header.Set, caller, "GET", req.Host, path, time.Now())
	return e.do(t, req)
}

// auditEntries decodes the refusals the service has put in its outbox.
func (e *env) auditEntries(t *testing.T) []*auditv1.EntryRecorded {
	t.Helper()
	rows, err := e.db.Pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, auditbus.Key("logs"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []*auditv1.EntryRecorded
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			t.Fatal(err)
		}
		m := &auditv1.EntryRecorded{}
		if err := proto.Unmarshal(body, m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// A team's members read its apps' logs whatever their role; a stranger and a token pinned to
// another app find nothing, and a token without a scope the table knows is refused, in the
// team's log.
func TestTeamMembersAndTokens(t *testing.T) {
	e := newEnv(t)
	team := uuid.NewString()
	web := e.newApp(t, team, "web")
	e.newApp(t, team, "api")
	e.db.Seed(t, entriesAt(web.ID, testNow.Add(-time.Minute), 2))
	member := func(role access.Role, scope, apps string) callerid.Caller {
		kind := callerid.KindSession
		if scope != "" || apps != "" {
			kind = callerid.KindAPI
		}
		teams := callerid.EncodeTeams([]access.Membership{
			{TeamID: uuid.NewString(), Slug: "mine", Role: access.Owner, Personal: true},
			{TeamID: team, Slug: "acme", Role: role},
		})
		return callerid.Caller{AccountID: uuid.NewString(), UserID: "member", TokenKind: kind, TokenID: "tok1", Teams: teams, Scope: scope, Apps: apps}
	}

	for _, c := range []callerid.Caller{member(access.Viewer, "", ""), member(access.Developer, "read", ""), member(access.Viewer, "read", "web")} {
		if r := e.getAs(t, c, "/api/apps/web/logs"); r.Status != 200 || len(r.Body["entries"].([]any)) != 2 {
			t.Fatalf("member %v reads: %d %s", c, r.Status, r.Raw)
		}
	}
	stranger := callerid.Caller{AccountID: uuid.NewString(), UserID: "stranger", TokenKind: callerid.KindSession}
	for _, path := range []string{"/api/apps/web/logs", "/api/apps/web/logs/stream"} {
		if r := e.getAs(t, stranger, path); r.Status != 404 {
			t.Fatalf("stranger %s: %d %s", path, r.Status, r.Raw)
		}
	}
	if r := e.getAs(t, member(access.Viewer, "read", "web"), "/api/apps/api/logs"); r.Status != 404 {
		t.Fatalf("pinned token reads another app: %d %s", r.Status, r.Raw)
	}
	if n := len(e.auditEntries(t)); n != 0 {
		t.Fatalf("%d entries for reads and strangers", n)
	}

	r := e.getAs(t, member(access.Viewer, "bogus", ""), "/api/apps/web/logs")
	if r.Status != 403 || r.Body["code"] != "insufficient_scope" || r.Body["requiredScope"] != "read" {
		t.Fatalf("unknown scope: %d %s", r.Status, r.Raw)
	}
	got := e.auditEntries(t)
	if len(got) != 1 || got[0].GetOutcome() != auditbus.OutcomeDenied || got[0].GetTeamId() != team || got[0].GetApp() != "web" {
		t.Fatalf("entries %v", got)
	}
}
