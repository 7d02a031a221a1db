package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	"tori.dev/services/apps/internal/apptest"
)

// teamFixture is a service with one shared team ("acme") and callers of every kind in it.
type teamFixture struct {
	s                        *apptest.Service
	team                     string
	owner, viewer, developer *callerid.Caller
	readToken                *callerid.Caller
	stranger                 *callerid.Caller
}

func member(account string, teams ...access.Membership) *callerid.Caller {
	own := access.Membership{TeamID: account, Slug: "own-" + account[len(account)-6:], Role: access.Owner, Personal: true}
	return &callerid.Caller{
		AccountID: account, UserID: "user-" + account, TokenKind: callerid.KindSession,
		Teams: callerid.EncodeTeams(append([]access.Membership{own}, teams...)), ClientIP: "203.0.113.9",
	}
}

func newTeamFixture(t *testing.T) *teamFixture {
	t.Helper()
	f := &teamFixture{s: apptest.New(t, apptest.Options{}), team: apptest.NewAccount()}
	in := func(r access.Role) access.Membership { return access.Membership{TeamID: f.team, Slug: "acme", Role: r} }
	f.owner = member(apptest.NewAccount(), in(access.Owner))
	f.viewer = member(apptest.NewAccount(), in(access.Viewer))
	f.developer = member(apptest.NewAccount(), in(access.Developer))
	f.stranger = member(apptest.NewAccount())
	// The owner's deploy-everything-but-read token: a scoped token carries only its team.
	f.readToken = &callerid.Caller{
		AccountID: f.owner.AccountID, UserID: f.owner.UserID, TokenKind: callerid.KindAPI, TokenID: "token-read",
		Teams: callerid.EncodeTeams([]access.Membership{in(access.Owner)}), Scope: "read",
	}
	f.s.SetPlan(f.team, "songbird", 1) // custom hostnames allowed
	return f
}

// entriesSince returns the audit entries written after the first n.
func (f *teamFixture) entriesSince(t *testing.T, n int) []*auditv1.EntryRecorded {
	t.Helper()
	return f.s.AuditEntries()[n:]
}

// state is everything the owner can see of the team's apps: a refused request must leave
// it as it was.
func (f *teamFixture) state(t *testing.T, slug string) string {
	t.Helper()
	var b strings.Builder
	b.Write(f.s.DoAs(f.owner, http.MethodGet, "/api/apps?team=acme", nil).Body)
	b.Write(f.s.DoAs(f.owner, http.MethodGet, "/api/apps/"+slug+"/env", nil).Body)
	b.Write(f.s.DoAs(f.owner, http.MethodGet, "/api/apps/"+slug+"/domains", nil).Body)
	return b.String()
}

// Each mutating route: a stranger gets 404 and leaves no entry; a viewer and a read token
// get 403 naming what they lack, leave one denied entry each and change nothing; the
// request that succeeds leaves exactly one success entry, with its action, target and keys.
func TestEveryChangeAndRefusalIsAudited(t *testing.T) {
	t.Parallel()
	f := newTeamFixture(t)
	const slug = "audited"
	routes := []struct {
		method, path string
		body         any
		action       string
		role         access.Role
		status       int
		target       string
		keys         string
	}{
		{http.MethodPost, "/api/apps", map[string]any{"team": "acme", "name": slug}, "app.create", access.Admin, http.StatusCreated, slug, ""},
		{http.MethodPut, "/api/apps/" + slug + "/env", map[string]any{"key": "A", "value": "value-of-a"}, "env.replace", access.Developer, http.StatusCreated, "apps/" + slug + "/env", "A"},
		{http.MethodPatch, "/api/apps/" + slug + "/env", map[string]any{"set": map[string]string{"C": "value-of-c", "B": "value-of-b"}, "unset": []string{"A"}}, "env.set", access.Developer, http.StatusOK, "apps/" + slug + "/env", "A,B,C"},
		{http.MethodDelete, "/api/apps/" + slug + "/env/B", nil, "env.unset", access.Developer, http.StatusNoContent, "apps/" + slug + "/env/B", "B"},
		{http.MethodPost, "/api/apps/" + slug + "/domains", map[string]any{"hostname": "www.example.com."}, "domain.add", access.Admin, http.StatusCreated, "www.example.com", ""},
		{http.MethodDelete, "/api/apps/" + slug + "/domains/www.example.com", nil, "domain.remove", access.Admin, http.StatusNoContent, "www.example.com", ""},
		{http.MethodDelete, "/api/apps/" + slug, nil, "app.delete", access.Admin, http.StatusOK, "apps/" + slug, ""},
	}
	for _, r := range routes {
		name := r.method + " " + r.path
		before := f.state(t, slug)
		n := len(f.s.AuditEntries())

		if got := f.s.DoAs(f.stranger, r.method, r.path, r.body); got.Status != http.StatusNotFound {
			t.Fatalf("%s by a non-member: %d %s, want 404", name, got.Status, got.Body)
		}
		if e := f.entriesSince(t, n); len(e) != 0 {
			t.Fatalf("%s by a non-member left %d entries; a stranger's 404 is not the team's", name, len(e))
		}

		refusals := []struct {
			who      *callerid.Caller
			code     string
			field    string
			required string
		}{
			{f.viewer, access.CodeInsufficientRole, "requiredRole", r.role.String()},
			{f.readToken, access.CodeInsufficientScope, "requiredScope", "write"},
		}
		if r.role == access.Admin { // a developer is refused what takes an admin
			refusals = append(refusals, struct {
				who      *callerid.Caller
				code     string
				field    string
				required string
			}{f.developer, access.CodeInsufficientRole, "requiredRole", "admin"})
		}
		for _, ref := range refusals {
			n := len(f.s.AuditEntries())
			got := f.s.DoAs(ref.who, r.method, r.path, r.body)
			m := got.Map(t)
			if got.Status != http.StatusForbidden || m["code"] != ref.code || m["error"] != ref.code || m[ref.field] != ref.required {
				t.Fatalf("%s refused: %d %s, want 403 %s %s=%s", name, got.Status, got.Body, ref.code, ref.field, ref.required)
			}
			e := f.entriesSince(t, n)
			if len(e) != 1 || e[0].Outcome != auditbus.OutcomeDenied || e[0].Action != r.action || e[0].TeamId != f.team ||
				e[0].UserId != ref.who.UserID || e[0].Metadata["code"] != ref.code {
				t.Fatalf("%s refused left %v, want one denied %s entry", name, e, r.action)
			}
		}
		if after := f.state(t, slug); after != before {
			t.Fatalf("%s: a refused request changed what the team sees:\n%s\n%s", name, before, after)
		}

		n = len(f.s.AuditEntries())
		if got := f.s.DoAs(f.owner, r.method, r.path, r.body); got.Status != r.status {
			t.Fatalf("%s by the owner: %d %s, want %d", name, got.Status, got.Body, r.status)
		}
		e := f.entriesSince(t, n)
		if len(e) != 1 {
			t.Fatalf("%s left %d entries, want 1: %v", name, len(e), e)
		}
		got := e[0]
		if got.Outcome != auditbus.OutcomeSuccess || got.Action != r.action || got.TeamId != f.team || got.App != slug ||
			got.Target != r.target || got.Metadata["keys"] != r.keys || got.UserId != f.owner.UserID ||
			got.ActorType != auditbus.ActorUser || got.Ip != "203.0.113.9" || got.EntryId == "" || got.At == nil {
			t.Errorf("%s: entry %v, want %s on %s with keys %q", name, got, r.action, r.target, r.keys)
		}
		if text := prototext.Format(got); strings.Contains(text, "value-of-") {
			t.Errorf("%s: an environment value is in the audit log: %s", name, text)
		}
		// The gate writes an entry its change did not carry in a transaction of its own,
		// and says so: every change here must commit its entry itself.
		if logs := f.s.Logs.String(); strings.Contains(logs, "audit entry written apart") {
			t.Fatalf("%s committed without its audit entry: %s", name, logs)
		}
	}
	if got := f.s.OutboxKeys(); !slices.Contains(got, "apps.app.deleted") {
		t.Fatalf("the app was never deleted: %v", got)
	}
}

// A refused create leaves nothing behind: the denied entry, not an app or an event.
func TestARefusedCreateMakesNoApp(t *testing.T) {
	t.Parallel()
	f := newTeamFixture(t)
	r := f.s.DoAs(f.developer, http.MethodPost, "/api/apps", map[string]any{"team": "acme", "name": "not-made"})
	if m := r.Map(t); r.Status != http.StatusForbidden || m["requiredRole"] != "admin" {
		t.Fatalf("developer create: %d %s", r.Status, r.Body)
	}
	if k := f.s.OutboxKeys(); len(k) != 0 {
		t.Fatalf("a refused create published %v", k)
	}
	f.s.Must(http.StatusNotFound, f.owner.AccountID, http.MethodGet, "/api/apps/not-made", nil)
	// The name is still free.
	if r := f.s.DoAs(f.owner, http.MethodPost, "/api/apps", map[string]any{"team": "acme", "name": "not-made"}); r.Status != http.StatusCreated {
		t.Fatalf("owner create: %d %s", r.Status, r.Body)
	}
}
