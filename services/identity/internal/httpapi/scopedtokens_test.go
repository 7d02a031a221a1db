package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/callerid"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
)

// Teams are made by the teams work (another branch); these tests put the rows in directly.

// team makes a team with owner as its owner and returns its id. A personal team has the
// owner's account id; when sign-in made it already, it takes slug.
func (h *harness) team(slug string, owner *callerid.Caller, personal bool, apps ...string) string {
	h.t.Helper()
	id := uuid.NewString()
	if personal {
		id = owner.AccountID
	}
	ctx := context.Background()
	if _, err := h.pool.Exec(ctx, `INSERT INTO teams (id, slug, name, personal, owner_account_id, created_at)
		VALUES ($1, $2, $2, $3, $4, now()) ON CONFLICT (id) DO UPDATE SET slug = $2`, id, slug, personal, owner.AccountID); err != nil {
		h.t.Fatal(err)
	}
	h.member(id, owner, "owner")
	for _, a := range apps {
		if _, err := h.pool.Exec(ctx, `INSERT INTO team_apps (app_id, team_id, slug) VALUES ($1, $2, $3)`, uuid.NewString(), id, a); err != nil {
			h.t.Fatal(err)
		}
	}
	return id
}

// member sets who's role in team ("" removes them).
func (h *harness) member(teamID string, who *callerid.Caller, role string) {
	h.t.Helper()
	ctx := context.Background()
	var err error
	if role == "" {
		_, err = h.pool.Exec(ctx, `DELETE FROM memberships WHERE team_id = $1 AND user_id = $2`, teamID, who.UserID)
	} else {
		_, err = h.pool.Exec(ctx, `INSERT INTO memberships (team_id, user_id, role, created_at) VALUES ($1, $2, $3, now())
			ON CONFLICT (team_id, user_id) DO UPDATE SET role = $3`, teamID, who.UserID, role)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// mint creates a token with body as caller and returns its response body.
func (h *harness) mint(caller *callerid.Caller, body map[string]any) map[string]any {
	h.t.Helper()
	r := h.do("POST", "/api/tokens", body, caller)
	h.expect(r, 201, "")
	return r.json(h.t)
}

func apiTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func TestScopedTokenCreation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	_, bob := h.signIn("bob@example.com")
	h.team("ada", ada, true)
	h.team("acme", ada, false, "web", "api")
	h.team("other", bob, false, "blog")
	now := h.clock.Now()

	c := h.mint(ada, map[string]any{"name": "ci", "team": "acme", "scopes": []string{"read", "deploy"}, "apps": []string{"web", "web"}, "expiresIn": 3600})
	if got := keys(c); got != "apps,createdAt,expiresAt,id,name,prefix,scopes,team,token" {
		t.Fatalf("shape %s", got)
	}
	if c["team"] != "acme" || fmt.Sprint(c["scopes"]) != "[deploy]" || fmt.Sprint(c["apps"]) != "[web]" || c["expiresAt"] != apiTime(now.Add(time.Hour)) {
		t.Fatalf("created %v", c)
	}
	// Defaults: 90 days, unpinned (an empty list pins nothing), the personal team without a team.
	d := h.mint(ada, map[string]any{"name": "d", "scopes": []string{"write"}, "apps": []string{}})
	if d["team"] != "ada" || fmt.Sprint(d["apps"]) != "[]" || d["expiresAt"] != apiTime(now.Add(90*24*time.Hour)) {
		t.Fatalf("defaults %v", d)
	}
	at := h.mint(ada, map[string]any{"name": "e", "team": "acme", "scopes": []string{"admin"}, "expiresAt": apiTime(now.Add(365 * 24 * time.Hour))})
	if at["expiresAt"] != apiTime(now.Add(365*24*time.Hour)) {
		t.Fatalf("expiresAt %v", at)
	}

	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no scopes", map[string]any{"team": "acme", "scopes": []string{}}, "scopes"},
		{"unknown scope", map[string]any{"team": "acme", "scopes": []string{"read", "root"}}, "scopes"},
		{"too short", map[string]any{"team": "acme", "scopes": []string{"read"}, "expiresIn": 59}, "expiresIn"},
		{"too long", map[string]any{"team": "acme", "scopes": []string{"read"}, "expiresIn": 365*24*3600 + 1}, "expiresIn"},
		{"both ends", map[string]any{"team": "acme", "scopes": []string{"read"}, "expiresIn": 600, "expiresAt": apiTime(now.Add(time.Hour))}, "expiresAt"},
		{"end not a time", map[string]any{"team": "acme", "scopes": []string{"read"}, "expiresAt": "tomorrow"}, "expiresAt"},
		{"end past a year", map[string]any{"team": "acme", "scopes": []string{"read"}, "expiresAt": apiTime(now.Add(366 * 24 * time.Hour))}, "expiresAt"},
		{"end in the past", map[string]any{"team": "acme", "scopes": []string{"read"}, "expiresAt": apiTime(now.Add(-time.Hour))}, "expiresAt"},
		{"another team's app", map[string]any{"team": "acme", "scopes": []string{"read"}, "apps": []string{"web", "blog"}}, "apps"},
		{"no such app", map[string]any{"team": "acme", "scopes": []string{"read"}, "apps": []string{"nope"}}, "apps"},
	} {
		tc.body["name"] = "x"
		m := h.expect(h.do("POST", "/api/tokens", tc.body, ada), 400, "invalid_parameter")
		if m["field"] != tc.field {
			t.Errorf("%s: field %v, want %s", tc.name, m["field"], tc.field)
		}
	}
	h.expect(h.do("POST", "/api/tokens", map[string]any{"name": "", "team": "acme", "scopes": []string{"read"}}, ada), 400, "invalid_name")
	// A team the caller is not a member of does not exist for them.
	h.expect(h.do("POST", "/api/tokens", map[string]any{"name": "x", "team": "other", "scopes": []string{"read"}}, ada), 404, "not found")
	h.expect(h.do("POST", "/api/tokens", map[string]any{"name": "x", "team": "nope", "scopes": []string{"read"}}, ada), 404, "not found")

	// {name} alone from a scoped token is still a full token's request: a session's only.
	scoped := h.callerOf(c["token"].(string))
	h.expect(h.do("POST", "/api/tokens", map[string]any{"name": "full"}, scoped), 403, "session_required")

	// A full token may mint a scoped one for any team of its person.
	full := h.callerOf(h.mint(ada, map[string]any{"name": "full"})["token"].(string))
	h.mint(full, map[string]any{"name": "from-full", "team": "acme", "scopes": []string{"admin"}})

	// The list shows every token with its scope; a full token's are null.
	for _, it := range h.do("GET", "/api/tokens", nil, ada).list(t) {
		if strings.Contains(fmt.Sprint(it), c["token"].(string)) || (it["name"] == "full") != (it["scopes"] == nil) {
			t.Fatalf("listed %v", it)
		}
	}
}

// A scoped token may mint only what it covers: its own team, no broader scope, no app it is
// not pinned to, no later end.
func TestScopedTokenMintsOnlyWhatItCovers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	h.team("ada", ada, true)
	acme := h.team("acme", ada, false, "web", "api")
	pinned := h.callerOf(h.mint(ada, map[string]any{"name": "p", "team": "acme", "scopes": []string{"deploy"}, "apps": []string{"web"}, "expiresIn": 3600})["token"].(string))
	open := h.callerOf(h.mint(ada, map[string]any{"name": "o", "team": "acme", "scopes": []string{"admin"}, "expiresIn": 86400})["token"].(string))

	for _, tc := range []struct {
		name     string
		parent   *callerid.Caller
		body     map[string]any
		required string // "" allowed
	}{
		{"narrower", pinned, map[string]any{"scopes": []string{"read"}, "apps": []string{"web"}, "expiresIn": 1800}, ""},
		{"equal", pinned, map[string]any{"team": "acme", "scopes": []string{"deploy"}, "apps": []string{"web"}, "expiresIn": 3600}, ""},
		{"broader scope", pinned, map[string]any{"scopes": []string{"write"}, "apps": []string{"web"}, "expiresIn": 600}, "write"},
		{"another app", pinned, map[string]any{"scopes": []string{"read"}, "apps": []string{"api"}, "expiresIn": 600}, "full"},
		{"more apps", pinned, map[string]any{"scopes": []string{"read"}, "apps": []string{"api", "web"}, "expiresIn": 600}, "full"},
		{"unpinned", pinned, map[string]any{"scopes": []string{"read"}, "expiresIn": 600}, "full"},
		{"later end", pinned, map[string]any{"scopes": []string{"read"}, "apps": []string{"web"}, "expiresIn": 3601}, "full"},
		{"default end", pinned, map[string]any{"scopes": []string{"read"}, "apps": []string{"web"}}, "full"},
		{"another team", pinned, map[string]any{"team": "ada", "scopes": []string{"read"}, "expiresIn": 600}, "full"},
		{"unpinned parent, pinned child", open, map[string]any{"scopes": []string{"write"}, "apps": []string{"api", "web"}, "expiresIn": 600}, ""},
		{"unpinned parent, unpinned child", open, map[string]any{"scopes": []string{"admin"}, "expiresIn": 86400}, ""},
		{"unpinned parent, later end", open, map[string]any{"scopes": []string{"read"}, "expiresIn": 86401}, "full"},
	} {
		tc.body["name"] = "child"
		r := h.do("POST", "/api/tokens", tc.body, tc.parent)
		if tc.required == "" {
			if r.status != 201 || r.json(t)["team"] != "acme" {
				t.Errorf("%s: %d %s", tc.name, r.status, r.body)
			}
			continue
		}
		if r.status != 403 {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
			continue
		}
		if m := r.json(t); m["code"] != "insufficient_scope" || m["requiredScope"] != tc.required {
			t.Errorf("%s: %s", tc.name, r.body)
		}
	}
	// Each refusal is in the team's log, as the token's.
	var denied int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_entries
		WHERE team_id = $1 AND action = 'token.create' AND outcome = 'denied' AND token_id = $2 AND actor_type = 'token'`,
		acme, pinned.TokenID).Scan(&denied); err != nil || denied != 7 {
		t.Fatalf("denied entries %d %v", denied, err)
	}
}

func TestScopedTokenIntrospection(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	h.team("ada", ada, true)
	acme := h.team("acme", ada, false, "web")
	c := h.mint(ada, map[string]any{"name": "ci", "team": "acme", "scopes": []string{"deploy"}, "apps": []string{"web"}, "expiresIn": 120})
	secret := c["token"].(string)

	intro := func() response {
		return h.do("POST", "/internal/introspect", map[string]string{"token": secret}, anonymous)
	}
	m := intro().json(t)
	if fmt.Sprint(m["teams"]) != fmt.Sprintf("[map[id:%s personal:false role:owner slug:acme]]", acme) ||
		m["scope"] != "deploy" || fmt.Sprint(m["apps"]) != "[web]" || m["expiresAt"] != c["expiresAt"] || m["tokenKind"] != "api" {
		t.Fatalf("introspection %v", m)
	}
	// A session's teams are all its person's; a full token has no scope.
	sess := h.do("POST", "/internal/introspect", map[string]string{"token": h.mint(ada, map[string]any{"name": "f"})["token"].(string)}, anonymous).json(t)
	if teams := sess["teams"].([]any); len(teams) != 2 || teams[0].(map[string]any)["personal"] != true || sess["scope"] != "" || sess["apps"] != nil || sess["expiresAt"] != nil {
		t.Fatalf("full token introspection %v", sess)
	}

	// The creator's current role, not the one they had when minting.
	h.member(acme, ada, "developer")
	if m := intro().json(t); !strings.Contains(fmt.Sprint(m["teams"]), "role:developer") {
		t.Fatalf("role not current: %v", m["teams"])
	}
	h.member(acme, ada, "owner")

	// Past its end: 401 with both headers, so the gateway answers token_expired.
	h.clock.Advance(121 * time.Second)
	r := intro()
	h.expect(r, 401, "token_expired")
	if r.header.Get("X-Tori-Token-Unknown") != "1" || r.header.Get("X-Tori-Token-Expired") != "1" {
		t.Fatalf("expired headers %v", r.header)
	}
	h.clock.Advance(-121 * time.Second)
	h.expect(intro(), 200, "")

	// A creator who left the team takes the token's power with them.
	h.member(acme, ada, "")
	r = intro()
	h.expect(r, 401, "unauthorized")
	if r.header.Get("X-Tori-Token-Unknown") != "1" || r.header.Get("X-Tori-Token-Expired") != "" {
		t.Fatalf("removed member headers %v", r.header)
	}
}

func TestScopedTokenRevokesOnlyItself(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	acme := h.team("acme", ada, false, "web")
	a := h.mint(ada, map[string]any{"name": "a", "team": "acme", "scopes": []string{"admin"}})
	b := h.mint(ada, map[string]any{"name": "b", "team": "acme", "scopes": []string{"read"}})
	full := h.mint(ada, map[string]any{"name": "full"})
	ac := h.callerOf(a["token"].(string))

	m := h.expect(h.do("DELETE", "/api/tokens/"+b["id"].(string), nil, ac), 403, "insufficient_scope")
	if m["requiredScope"] != "full" {
		t.Fatalf("refusal %v", m)
	}
	h.expect(h.do("DELETE", "/api/tokens/"+full["id"].(string), nil, ac), 403, "insufficient_scope")
	h.expect(h.do("DELETE", "/api/tokens/"+a["id"].(string), nil, ac), 204, "")
	// A full token revokes any of its person's.
	fc := h.callerOf(full["token"].(string))
	h.expect(h.do("DELETE", "/api/tokens/"+b["id"].(string), nil, fc), 204, "")
	var ev identityv1.TokenRevoked
	h.lastEvent("identity.token.revoked", &ev)
	if ev.TokenId != b["id"] {
		t.Fatalf("revoked event %v", &ev)
	}
	// Create, revoke and the refusals are in acme's log; no secret anywhere in it.
	rows, err := h.pool.Query(context.Background(), `SELECT action || ':' || outcome || ':' || target, metadata::text
		FROM audit_entries WHERE team_id = $1 ORDER BY at, action, outcome`, acme)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s, meta string
		if err := rows.Scan(&s, &meta); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s+meta, "svc_") { // no secret, nor even its prefix
			t.Fatalf("a secret in the log: %s %s", s, meta)
		}
		got = append(got, s)
	}
	want := fmt.Sprintf("[token.create:success:tokens/%s token.create:success:tokens/%s token.revoke:denied:tokens/%s token.revoke:denied:tokens/%s token.revoke:success:tokens/%s token.revoke:success:tokens/%s]",
		a["id"], b["id"], b["id"], full["id"], a["id"], b["id"])
	if fmt.Sprint(got) != want {
		t.Fatalf("log\n got %v\nwant %s", got, want)
	}
}

func TestTeamTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	_, bob := h.signIn("bob@example.com")
	_, cat := h.signIn("cat@example.com")
	_, dan := h.signIn("dan@example.com")
	acme := h.team("acme", ada, false, "web")
	h.member(acme, bob, "admin")
	h.member(acme, cat, "developer")
	h.team("dan-co", dan, false)
	tok := h.mint(ada, map[string]any{"name": "ci", "team": "acme", "scopes": []string{"deploy"}, "apps": []string{"web"}})
	h.mint(cat, map[string]any{"name": "cat", "team": "acme", "scopes": []string{"read"}})
	h.mint(ada, map[string]any{"name": "full"}) // a full token is no team's

	bobS := h.callerOf(mustSession(h, "bob@example.com"))
	r := h.do("GET", "/api/teams/acme/tokens", nil, bobS)
	h.expect(r, 200, "")
	list := r.list(t)
	if len(list) != 2 || strings.Contains(string(r.body), tok["token"].(string)) {
		t.Fatalf("team tokens %s", r.body)
	}
	if got := keys(list[0]); got != "apps,createdAt,email,expiresAt,id,lastUsedAt,name,prefix,scopes,team,userId" {
		t.Fatalf("shape %s", got)
	}
	if list[0]["id"] != tok["id"] || list[0]["email"] != "ada@example.com" || list[0]["userId"] != ada.UserID || list[1]["email"] != "cat@example.com" {
		t.Fatalf("team tokens %v", list)
	}
	// A developer is below the route's role; a stranger does not see the team at all.
	catS := h.callerOf(mustSession(h, "cat@example.com"))
	m := h.expect(h.do("GET", "/api/teams/acme/tokens", nil, catS), 403, "insufficient_role")
	if m["requiredRole"] != "admin" {
		t.Fatalf("refusal %v", m)
	}
	h.expect(h.do("GET", "/api/teams/acme/tokens", nil, h.callerOf(mustSession(h, "dan@example.com"))), 404, "not found")
	h.expect(h.do("DELETE", "/api/teams/acme/tokens/"+tok["id"].(string), nil, catS), 403, "insufficient_role")

	h.expect(h.do("DELETE", "/api/teams/acme/tokens/"+uuid.NewString(), nil, bobS), 404, "not found")
	h.expect(h.do("DELETE", "/api/teams/acme/tokens/"+tok["id"].(string), nil, bobS), 204, "")
	h.expect(h.do("POST", "/internal/introspect", map[string]string{"token": tok["token"].(string)}, anonymous), 401, "unauthorized")
	var ev identityv1.TokenRevoked
	h.lastEvent("identity.token.revoked", &ev)
	if ev.TokenId != tok["id"] || ev.AccountId != ada.AccountID {
		t.Fatalf("revoked event %v", &ev)
	}
	h.expect(h.do("DELETE", "/api/teams/acme/tokens/"+tok["id"].(string), nil, bobS), 404, "not found")

	// The gate's entries: the revocation by bob, and cat's two refusals.
	rows, _ := h.pool.Query(context.Background(), `SELECT action, outcome, coalesce(user_id::text, ''), ip FROM audit_entries
		WHERE team_id = $1 AND action <> 'token.create' ORDER BY at, outcome`, acme)
	var got []string
	for rows.Next() {
		var a, o, u, ip string
		if err := rows.Scan(&a, &o, &u, &ip); err != nil {
			t.Fatal(err)
		}
		got = append(got, a+":"+o+":"+map[string]string{bob.UserID: "bob", cat.UserID: "cat"}[u]+":"+ip)
	}
	if want := "[read:denied:cat:203.0.113.9 token.revoke:denied:cat:203.0.113.9 token.revoke:success:bob:203.0.113.9]"; fmt.Sprint(got) != want {
		t.Fatalf("entries %v, want %s", got, want)
	}
}

// mustSession signs email in again and returns the new session token.
func mustSession(h *harness, email string) string {
	tok, _ := h.signIn(email)
	return tok
}
