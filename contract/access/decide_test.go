package access

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The rules, stated again here independently of Decide: by name, with ranks of this test's
// own, so that a reordered constant or a changed comparison in Decide shows.
var (
	roleRank  = map[string]int{"": 0, "viewer": 1, "developer": 2, "admin": 3, "owner": 4}
	scopeRank = map[string]int{"": 0, "read": 1, "deploy": 2, "write": 3, "admin": 4, "full": 5}
)

const (
	teamID     = "0190f5e4-0000-7000-8000-00000000000t"
	personalID = "0190f5e4-0000-7000-8000-00000000000p"
	pinnedApp  = "alpha"
	otherApp   = "beta"
)

// caller is one point of the grid: the caller's role in the located team ("" = not a
// member), the token's scope by name, whether it is a session, and its pinned apps.
type caller struct {
	role    string
	scope   string
	session bool
	pinned  bool
}

func (c caller) principal() Principal {
	// Always the owner of a personal team as well: the role that counts is the located
	// team's, never the caller's best.
	ms := []Membership{{TeamID: personalID, Slug: "me", Role: Owner, Personal: true}}
	if c.role != "" {
		r, ok := ParseRole(c.role)
		if !ok {
			panic(c.role)
		}
		ms = append(ms, Membership{TeamID: teamID, Slug: "acme", Role: r})
	}
	p := Principal{Memberships: ms, Scope: ScopeOf(c.scope), Session: c.session}
	if c.scope == "full" {
		p.Scope = FullScope
	}
	if c.pinned {
		p.Apps = []string{pinnedApp}
	}
	return p
}

// expect is the outcome the contract gives c calling r on the team (and app): "ok", "404",
// or "403 <code> <required>".
func expect(c caller, r Route, app string) string {
	if r.SessionOnly && !c.session {
		return "403 session_required session"
	}
	inTeam := r.Locator == AppPath || r.Locator == TeamPath || r.Locator == TeamParam
	if inTeam {
		if c.role == "" {
			return "404"
		}
		if r.Locator == AppPath && c.pinned && app != pinnedApp {
			return "404"
		}
		if r.Locator == TeamParam && c.pinned && r.Method != "GET" {
			return "403 insufficient_scope full"
		}
		if roleRank[c.role] < roleRank[r.Role.String()] {
			return "403 insufficient_role " + r.Role.String()
		}
	}
	if scopeRank[c.scope] < scopeRank[r.Scope.String()] {
		return "403 insufficient_scope " + r.Scope.String()
	}
	return "ok"
}

func outcome(err error) string {
	var d *Denied
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrNotFound):
		return "404"
	case errors.As(err, &d):
		return "403 " + d.Code + " " + d.Required
	}
	return "unexpected " + err.Error()
}

// Every route of the table, against every role (and none), every scope, as a session or a
// token, pinned or not, and for app routes on the pinned app and another.
func TestDecideEveryRouteRoleAndScope(t *testing.T) {
	roles := []string{"", "viewer", "developer", "admin", "owner"}
	type cred struct {
		scope   string
		session bool
	}
	creds := []cred{{"read", false}, {"deploy", false}, {"write", false}, {"admin", false}, {"full", false}, {"full", true}}
	n := 0
	for _, r := range All() {
		apps := []string{""}
		if r.Locator == AppPath {
			apps = []string{pinnedApp, otherApp}
		}
		team := ""
		switch r.Locator {
		case AppPath, TeamPath, TeamParam:
			team = teamID
		}
		for _, role := range roles {
			for _, cr := range creds {
				for _, pinned := range []bool{false, true} {
					for _, app := range apps {
						c := caller{role: role, scope: cr.scope, session: cr.session, pinned: pinned}
						got := outcome(Decide(c.principal(), r, team, app))
						if want := expect(c, r, app); got != want {
							t.Errorf("%s %s as %+v on app %q: %s, want %s", r.Method, r.Template, c, app, got, want)
						}
						n++
					}
				}
			}
		}
	}
	if n < len(All())*len(roles)*len(creds)*2 {
		t.Fatalf("only %d cases", n)
	}
}

// The issue's own examples, spelled out.
func TestDecideTheIssuesExamples(t *testing.T) {
	find := func(method, tmpl string) Route {
		t.Helper()
		r, ok := Find(method, tmpl)
		if !ok {
			t.Fatalf("%s %s not in the table", method, tmpl)
		}
		return r
	}
	dev := caller{role: "developer", scope: "full", session: true}
	viewer := caller{role: "viewer", scope: "full", session: true}
	deployA := caller{role: "developer", scope: "deploy", pinned: true}
	cases := []struct {
		who          caller
		method, tmpl string
		app, outcome string
		teamOverride string
	}{
		{dev, "DELETE", "/api/apps/{slug}", "x", "403 insufficient_role admin", ""},
		{viewer, "GET", "/api/apps/{slug}/env", "x", "ok", ""},
		{viewer, "PUT", "/api/apps/{slug}/env", "x", "403 insufficient_role developer", ""},
		{viewer, "PATCH", "/api/apps/{slug}/env", "x", "403 insufficient_role developer", ""},
		{caller{scope: "full", session: true}, "GET", "/api/apps/{slug}", "x", "404", ""},
		{deployA, "POST", "/api/apps/{slug}/deploys", pinnedApp, "ok", ""},
		{deployA, "POST", "/api/apps/{slug}/deploys", otherApp, "404", ""},
		{deployA, "PUT", "/api/apps/{slug}/env", pinnedApp, "403 insufficient_scope write", ""},
		{deployA, "POST", "/api/apps", "", "403 insufficient_scope full", ""},
		{caller{role: "admin", scope: "full", session: true}, "POST", "/api/billing/checkout", "", "403 insufficient_role owner", ""},
		{caller{role: "owner", scope: "write"}, "POST", "/api/billing/checkout", "", "403 insufficient_scope admin", ""},
		{caller{role: "owner", scope: "admin"}, "GET", "/api/billing", "", "ok", ""},
		{caller{role: "owner", scope: "full"}, "POST", "/api/auth/cli/approve", "", "403 session_required session", ""},
		{caller{role: "owner", scope: "admin"}, "POST", "/api/teams", "", "403 insufficient_scope full", ""},
		{caller{role: "viewer", scope: "admin"}, "DELETE", "/api/teams/{team}/members/{userId}", "", "ok", ""},
		{caller{role: "admin", scope: "full", session: true}, "DELETE", "/api/teams/{team}", "", "403 insufficient_role owner", ""},
	}
	for _, tc := range cases {
		r := find(tc.method, tc.tmpl)
		team := ""
		if r.Locator != Personal && r.Locator != MemberTeams {
			team = teamID
		}
		if got := outcome(Decide(tc.who.principal(), r, team, tc.app)); got != tc.outcome {
			t.Errorf("%s %s as %+v on %q: %s, want %s", tc.method, tc.tmpl, tc.who, tc.app, got, tc.outcome)
		}
	}
}

// A header naming no scope the contract knows grants nothing, not everything.
func TestUnknownScopeGrantsNothing(t *testing.T) {
	p := Principal{Memberships: []Membership{{TeamID: teamID, Role: Owner}}, Scope: ScopeOf("superuser")}
	for _, r := range All() {
		team := ""
		if r.Locator != Personal && r.Locator != MemberTeams {
			team = teamID
		}
		if err := Decide(p, r, team, "x"); err == nil {
			t.Errorf("%s %s allowed with an unknown scope", r.Method, r.Template)
		}
	}
}

func TestTableIsWellFormed(t *testing.T) {
	// Non-GET routes that record nothing in a team's audit log: the person's own sign-in
	// flow and settings, which belong to no team.
	unaudited := map[string]bool{
		"PATCH /api/account":           true,
		"POST /api/auth/logout":        true,
		"POST /api/auth/cli/approve":   true,
		"POST /api/auth/cli/deny":      true,
		"POST /api/auth/cli/authorize": true,
	}
	seen := map[string]bool{}
	for _, r := range All() {
		op := r.Method + " " + r.Template
		if seen[op] {
			t.Errorf("%s is listed twice", op)
		}
		seen[op] = true
		if !strings.HasPrefix(r.Template, "/api/") || strings.HasSuffix(r.Template, "/") || strings.Contains(r.Template, ":") {
			t.Errorf("%s: not a table-style template", op)
		}
		switch r.Method {
		case "GET", "POST", "PUT", "PATCH", "DELETE":
		default:
			t.Errorf("%s: method", op)
		}
		if r.Changes() && r.Method == "GET" {
			t.Errorf("%s: a read is audited as a change (%s)", op, r.Action)
		}
		if r.Method != "GET" && !r.Changes() && !unaudited[op] {
			t.Errorf("%s changes something but has no audit action", op)
		}
		if r.Changes() && unaudited[op] {
			t.Errorf("%s is listed as unaudited but has action %s", op, r.Action)
		}
		if r.Action != "" && strings.Count(r.Action, ".") != 1 {
			t.Errorf("%s: action %q is not noun.verb", op, r.Action)
		}
		if r.Scope < Read || r.Scope > FullScope {
			t.Errorf("%s: scope %d", op, r.Scope)
		}
		switch r.Locator {
		case AppPath:
			if !strings.HasPrefix(r.Template, "/api/apps/{slug}") || r.Role == NoRole {
				t.Errorf("%s: an app route needs {slug} and a role", op)
			}
		case TeamPath:
			if !strings.HasPrefix(r.Template, "/api/teams/{team}") || r.Role == NoRole {
				t.Errorf("%s: a team route needs {team} and a role", op)
			}
		case TeamParam:
			if r.Role == NoRole {
				t.Errorf("%s: a team route needs a role", op)
			}
		case Personal, MemberTeams:
			if r.Role != NoRole {
				t.Errorf("%s: a route in no one team cannot ask for a role", op)
			}
		}
	}
	for op := range unaudited {
		if !seen[op] {
			t.Errorf("%s is listed as unaudited but not in the table", op)
		}
	}
}

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		method, tmpl string
		want         string
	}{
		{"GET", "/api/apps/{slug}", "GET /api/apps/{slug}"},
		{"HEAD", "/api/apps/:slug", "GET /api/apps/{slug}"},
		{"DELETE", "/api/apps/:slug/env/:key", "DELETE /api/apps/{slug}/env/{key}"},
		{"GET", "/api/teams/:team/", "GET /api/teams/{team}"},
		{"GET", "/api/apps/:slug?", "GET /api/apps/{slug}"},
		{"POST", "/api/apps/{slug}", ""},
		{"GET", "/api/nothing", ""},
	} {
		r, ok := Find(tc.method, tc.tmpl)
		got := ""
		if ok {
			got = r.Method + " " + r.Template
		}
		if got != tc.want {
			t.Errorf("Find(%s, %s) = %q, want %q", tc.method, tc.tmpl, got, tc.want)
		}
	}
	// All is a copy: changing it changes nothing.
	a := All()
	before := fmt.Sprint(a[0])
	a[0].Role, a[0].Template = Owner, "/api/changed"
	if fmt.Sprint(All()[0]) != before {
		t.Fatal("All shares the table")
	}
}
