package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"tori.dev/contract/access"
	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/pkg/testinfra"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/httpapi"
	"tori.dev/services/billing/internal/providerfake"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

// newFakePaidFixture is billing with paid plans on over the FAKE provider, which records what
// each customer and checkout was made with.
func newFakePaidFixture(t *testing.T) (fixture, *providerfake.Provider) {
	t.Helper()
	pool := testinfra.ServicePool(t, store.Service(""), bus.Migrations, store.Migrations)
	st := store.New(pool)
	fake := providerfake.New()
	svc := usecase.New(st, usecase.WithPayments(usecase.Payments{
		Provider: fake,
		Prices: usecase.Prices{
			{Plan: catalog.Songbird, Interval: catalog.Monthly}: "price_songbird_month",
			{Plan: catalog.Flock, Interval: catalog.Yearly}:     "price_flock_year",
		},
		ConsoleURL: "http://console.test",
	}))
	app := httpapi.New(httpapi.Deps{
		Billing: svc, SigningKey: key, DB: pool,
		Health: health.NewIdentity("billing", "test"),
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return fixture{app: app, svc: svc, st: st, pool: pool}, fake
}

// auditEntries are the audit entries billing has put in its outbox, oldest first.
func auditEntries(t *testing.T, f fixture) []*auditv1.EntryRecorded {
	t.Helper()
	rows, err := f.pool.Query(ctx, `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, auditbus.Key("billing"))
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	var out []*auditv1.EntryRecorded
	for _, b := range bodies {
		var e auditv1.EntryRecorded
		if err := proto.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, &e)
	}
	return out
}

// A team's billing is its owners': `?team=` or the body's team picks it (the personal team
// when neither does), the provider's objects name the team, each change is one audit entry
// committed by billing, an admin is refused (and recorded), a token without the admin scope
// too, and a stranger or an unknown team gets 404.
func TestTeamBillingIsItsOwnersAndAudited(t *testing.T) {
	t.Parallel()
	f, fake := newFakePaidFixture(t)
	person, other := f.account(t), f.account(t)
	team := uuid.Must(uuid.NewV7())
	if err := f.st.InTx(ctx, func(tx usecase.Tx) error { return f.svc.RegisterTeam(ctx, tx, team, person, false) }); err != nil {
		t.Fatal(err)
	}
	as := func(account uuid.UUID, role access.Role) callerid.Caller {
		c := userOf(account)
		c.Teams = callerid.EncodeTeams([]access.Membership{
			{TeamID: account.String(), Slug: "own-" + account.String()[:8], Role: access.Owner, Personal: true},
			{TeamID: team.String(), Slug: "crew", Role: role},
		})
		return c
	}
	owner, admin := as(person, access.Owner), as(other, access.Admin)
	want := func(n int, action, outcome string, who callerid.Caller, teamID uuid.UUID) *auditv1.EntryRecorded {
		t.Helper()
		es := auditEntries(t, f)
		if len(es) != n {
			t.Fatalf("%d audit entries, want %d", len(es), n)
		}
		if n == 0 {
			return nil
		}
		e := es[n-1]
		if e.GetAction() != action || e.GetOutcome() != outcome || e.GetTeamId() != teamID.String() || e.GetUserId() != who.UserID || e.GetAt() == nil {
			t.Fatalf("entry %v; want %s %s in %s", e, action, outcome, teamID)
		}
		return e
	}

	status, body := do2(t, f, "GET", "/api/billing?team=crew", "", owner)
	var state struct{ Plan string }
	if _ = json.Unmarshal([]byte(body), &state); status != 200 || state.Plan != "nestling" {
		t.Fatalf("team's billing: %d %s", status, body)
	}
	want(0, "", "", owner, team)

	u := openedURL(t, f, "POST", "/api/billing/checkout", `{"plan":"songbird","interval":"month","team":"crew"}`, owner)
	if _, err := url.Parse(u); err != nil || len(fake.Checkouts) != 1 {
		t.Fatalf("checkout %q: %d sessions", u, len(fake.Checkouts))
	}
	if k, c := fake.Checkouts[0], fake.Customers[0]; k.AccountID != team || k.Personal || c.AccountID != team || c.Personal {
		t.Fatalf("the team's checkout %+v, customer %+v", k, c)
	}
	if e := want(1, "billing.checkout", auditbus.OutcomeSuccess, owner, team); e.GetTarget() != "billing/checkout" {
		t.Fatalf("target %q", e.GetTarget())
	}
	openedURL(t, f, "POST", "/api/billing/portal?team=crew", "", owner)
	want(2, "billing.portal", auditbus.OutcomeSuccess, owner, team)
	if status, body := do2(t, f, "POST", "/api/billing/sync?team=crew", "", owner); status != 200 {
		t.Fatalf("sync: %d %s", status, body)
	}
	want(3, "billing.sync", auditbus.OutcomeSuccess, owner, team)

	// The personal team when none is named, its objects carrying the account as before.
	alone := userOf(person) // signed without teams, as before teams
	openedURL(t, f, "POST", "/api/billing/checkout", `{"plan":"flock","interval":"year"}`, alone)
	if k := fake.Checkouts[1]; k.AccountID != person || !k.Personal {
		t.Fatalf("the personal checkout %+v", k)
	}
	want(4, "billing.checkout", auditbus.OutcomeSuccess, alone, person)

	// An admin of the team may not touch its billing; the refusal is the team's to see.
	status, body = do2(t, f, "POST", "/api/billing/checkout", `{"plan":"songbird","interval":"month","team":"crew"}`, admin)
	var e struct{ Code, RequiredRole, RequiredScope string }
	if _ = json.Unmarshal([]byte(body), &e); status != 403 || e.Code != access.CodeInsufficientRole || e.RequiredRole != "owner" {
		t.Fatalf("admin checkout: %d %s", status, body)
	}
	want(5, "billing.checkout", auditbus.OutcomeDenied, admin, team)
	if status, _ := do2(t, f, "GET", "/api/billing?team=crew", "", admin); status != 403 {
		t.Fatalf("admin reads the team's billing: %d", status)
	}

	// An owner's token scoped below admin.
	scoped := owner
	scoped.TokenKind, scoped.Scope = callerid.KindAPI, "write"
	scoped.Teams = callerid.EncodeTeams([]access.Membership{{TeamID: team.String(), Slug: "crew", Role: access.Owner}})
	status, body = do2(t, f, "POST", "/api/billing/portal", "", scoped)
	if _ = json.Unmarshal([]byte(body), &e); status != 403 || e.Code != access.CodeInsufficientScope || e.RequiredScope != "admin" {
		t.Fatalf("write token: %d %s", status, body)
	}

	// Not a member, or no such team: 404, and nothing in anyone's log.
	n := len(auditEntries(t, f))
	for _, tc := range []struct {
		caller callerid.Caller
		path   string
	}{{userOf(uuid.Must(uuid.NewV7())), "/api/billing/portal?team=crew"}, {owner, "/api/billing/portal?team=nope"}} {
		if status, body := do2(t, f, "POST", tc.path, "", tc.caller); status != 404 {
			t.Fatalf("%s: %d %s", tc.path, status, body)
		}
	}
	if len(auditEntries(t, f)) != n {
		t.Fatal("a 404 left an audit entry")
	}
	if len(fake.Checkouts) != 2 {
		t.Fatalf("%d checkout sessions, want the 2 allowed", len(fake.Checkouts))
	}
}

// openedURL is the provider page a checkout or portal request answered.
func openedURL(t *testing.T, f fixture, method, path, body string, caller callerid.Caller) string {
	t.Helper()
	status, answer := do2(t, f, method, path, body, caller)
	return urlFrom(t, status, answer)
}

// Every authenticated /api route is in contract/access's table and goes through the gate
// before its handler: a token with no scope the table knows is refused 403
// insufficient_scope, which only the gate answers. The catalog and the provider's webhook are
// the two public routes.
func TestEveryAuthenticatedRouteIsGuarded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	public := map[string]bool{"GET /api/plans": true, "POST /api/billing/webhook": true}
	caller := userOf(f.account(t))
	caller.TokenKind, caller.Scope = callerid.KindAPI, "none-known"
	checked := 0
	for _, r := range f.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") || r.Method == "HEAD" || public[r.Method+" "+r.Path] {
			continue
		}
		if _, ok := access.Find(r.Method, r.Path); !ok {
			t.Errorf("%s %s is not in contract/access's table", r.Method, r.Path)
			continue
		}
		checked++
		status, body := do(t, f.app, request(r.Method, r.Path, `{"plan":"songbird","interval":"month"}`, caller, key))
		var e struct{ Code, RequiredScope string }
		if _ = json.Unmarshal([]byte(body), &e); status != 403 || e.Code != access.CodeInsufficientScope || e.RequiredScope != "admin" {
			t.Errorf("%s %s: %d %s; want the gate's 403 insufficient_scope", r.Method, r.Path, status, body)
		}
	}
	if checked != 4 {
		t.Fatalf("%d authenticated routes checked, want 4", checked)
	}
}
