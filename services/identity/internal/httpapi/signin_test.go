package httpapi_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
)

func TestMagicLinkRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, bad := range []string{"", "ada", "ada@", "Ada <ada@example.com>", "a@b"} {
		h.expect(h.do("POST", "/api/auth/magic-link", map[string]string{"email": bad}, anonymous), 400, "invalid_email")
	}
	h.expect(h.do("POST", "/api/auth/magic-link", nil, anonymous), 400, "invalid_email")
	for _, body := range []string{`{"email":`, `[]`, `{"email": 5}`, `nonsense`} {
		h.expect(h.raw("POST", "/api/auth/magic-link", []byte(body), anonymous), 400, "invalid_body")
	}

	// Known and unknown addresses get the same answer: no account enumeration.
	for range 2 {
		r := h.do("POST", "/api/auth/magic-link", map[string]string{"email": "Ada@Example.com"}, anonymous)
		h.expect(r, 202, "")
		if string(r.body) != `{"ok":true}` {
			t.Fatalf("body %s", r.body)
		}
	}
	m := h.mailer.last(t)
	if m.To != "ada@example.com" {
		t.Fatalf("mail to %q", m.To)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(consoleURL) + `/auth/verify\?token=[A-Za-z0-9_-]{43}$`).MatchString(m.Text) {
		t.Fatalf("mail text has no CONSOLE_URL/auth/verify?token=<code> link:\n%s", m.Text)
	}

	h.mailer.refuse()
	h.expect(h.do("POST", "/api/auth/magic-link", map[string]string{"email": "bob@example.com"}, anonymous), 503, "mail_unavailable")
}

func TestMagicLinkVerify(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	code := h.magicCode("ada.lovelace@example.com")

	r := h.do("POST", "/api/auth/magic-link/verify", map[string]string{"token": code}, anonymous)
	h.expect(r, 200, "")
	body := r.json(t)
	if got := keys(body); got != "expiresAt,token,user" {
		t.Fatalf("verify shape %s", got)
	}
	user := body["user"].(map[string]any)
	if got := keys(user); got != "email,id,name" {
		t.Fatalf("user shape %s", got)
	}
	if user["email"] != "ada.lovelace@example.com" || user["name"] != "ada.lovelace" {
		t.Fatalf("user %v", user)
	}
	if tok := body["token"].(string); !strings.HasPrefix(tok, "tok_") {
		t.Fatalf("session token %q", tok)
	}
	// Sessions last 30 days from sign-in, written as RFC 3339 UTC with milliseconds.
	if body["expiresAt"] != h.clock.Now().Add(30*24*time.Hour).Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("expiresAt %v", body["expiresAt"])
	}

	// The first verify created the account and told the other services.
	var created identityv1.AccountCreated
	h.lastEvent("identity.account.created", &created)
	caller := h.callerOf(body["token"].(string))
	if created.AccountId != caller.AccountID || created.UserId != user["id"] || created.Email != "ada.lovelace@example.com" ||
		created.Name != "ada.lovelace" || created.DefaultRegion != "eu" {
		t.Fatalf("account.created %v", &created)
	}
	// ... and its personal team, whose id is the account's, named and slugged after its person.
	var team identityv1.TeamCreated
	h.lastEvent("identity.team.created", &team)
	if team.TeamId != caller.AccountID || !team.Personal || team.Name != "ada.lovelace" || team.Slug != "ada-lovelace" ||
		team.OwnerAccountId != caller.AccountID {
		t.Fatalf("team.created %v", &team)
	}

	// A code works once.
	h.expect(h.do("POST", "/api/auth/magic-link/verify", map[string]string{"token": code}, anonymous), 400, "invalid_token")
	// Unknown and empty codes.
	h.expect(h.do("POST", "/api/auth/magic-link/verify", map[string]string{"token": "nope"}, anonymous), 400, "invalid_token")
	h.expect(h.do("POST", "/api/auth/magic-link/verify", map[string]string{}, anonymous), 400, "invalid_token")
	h.expect(h.raw("POST", "/api/auth/magic-link/verify", []byte(`{"token":`), anonymous), 400, "invalid_body")

	// A code expires after 15 minutes.
	late := h.magicCode("ada.lovelace@example.com")
	h.clock.Advance(15 * time.Minute)
	h.expect(h.do("POST", "/api/auth/magic-link/verify", map[string]string{"token": late}, anonymous), 400, "invalid_token")
	inTime := h.magicCode("ada.lovelace@example.com")
	h.clock.Advance(15*time.Minute - time.Second)
	r = h.do("POST", "/api/auth/magic-link/verify", map[string]string{"token": inTime}, anonymous)
	h.expect(r, 200, "")

	// Signing in again reaches the same account and creates nothing.
	if again := r.json(t)["user"].(map[string]any); again["id"] != user["id"] {
		t.Fatalf("second sign-in made another user: %v", again)
	}
	if got := h.events(); !slices.Equal(got, []string{identitybus.KeyAccountCreated, identitybus.KeyTeamCreated}) {
		t.Fatalf("events %v, want one account.created and its personal team's team.created", got)
	}
}

func TestIntrospect(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok, caller := h.signIn("ada@example.com")

	r := h.do("POST", "/internal/introspect", map[string]string{"token": tok}, anonymous)
	h.expect(r, 200, "")
	m := r.json(t)
	if got := keys(m); got != "accountId,apps,expiresAt,scope,teams,tokenId,tokenKind,userId" {
		t.Fatalf("introspect shape %s", got)
	}
	if m["tokenKind"] != "session" || m["expiresAt"] == nil {
		t.Fatalf("session introspection %v", m)
	}

	for _, bad := range []string{"", "tok_nope", "svc_nope", "Bearer " + tok, tok + "x", "nonsense"} {
		h.expect(h.do("POST", "/internal/introspect", map[string]string{"token": bad}, anonymous), 401, "unauthorized")
	}
	h.expect(h.raw("POST", "/internal/introspect", []byte(`{`), anonymous), 400, "invalid_body")

	// An API token: no expiry, and its use shows in the list, written at most once a minute.
	created := h.do("POST", "/api/tokens", map[string]string{"name": "ci"}, caller)
	h.expect(created, 201, "")
	secret := created.json(t)["token"].(string)
	lastUsed := func() any { return h.do("GET", "/api/tokens", nil, caller).list(t)[0]["lastUsedAt"] }
	if lastUsed() != nil {
		t.Fatal("a new token has no last use")
	}
	api := h.do("POST", "/internal/introspect", map[string]string{"token": secret}, anonymous).json(t)
	if api["tokenKind"] != "api" || api["expiresAt"] != nil || api["accountId"] != caller.AccountID || api["tokenId"] != created.json(t)["id"] {
		t.Fatalf("api introspection %v", api)
	}
	first := lastUsed()
	if first != h.clock.Now().Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("lastUsedAt %v", first)
	}
	h.clock.Advance(30 * time.Second)
	h.callerOf(secret)
	if lastUsed() != first {
		t.Fatal("lastUsedAt written again within a minute")
	}
	h.clock.Advance(31 * time.Second)
	h.callerOf(secret)
	if lastUsed() == first {
		t.Fatal("lastUsedAt not written after a minute")
	}

	// Sessions end after 30 days.
	h.clock.Advance(30 * 24 * time.Hour)
	h.expect(h.do("POST", "/internal/introspect", map[string]string{"token": tok}, anonymous), 401, "unauthorized")
	h.callerOf(secret) // API tokens do not expire
}

func TestLogout(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok, caller := h.signIn("ada@example.com")
	other, _ := h.signIn("ada@example.com")

	secret := h.do("POST", "/api/tokens", map[string]string{"name": "ci"}, caller).json(t)["token"].(string)
	h.expect(h.do("POST", "/api/auth/logout", nil, h.callerOf(secret)), 403, "session_required")

	r := h.do("POST", "/api/auth/logout", nil, caller)
	h.expect(r, 204, "")
	if len(r.body) != 0 {
		t.Fatalf("204 with a body: %q", r.body)
	}
	h.expect(h.do("POST", "/internal/introspect", map[string]string{"token": tok}, anonymous), 401, "unauthorized")
	h.callerOf(other) // only the presented session ends

	var ev identityv1.TokenRevoked
	h.lastEvent("identity.token.revoked", &ev)
	if ev.TokenId != caller.TokenID || ev.AccountId != caller.AccountID {
		t.Fatalf("token.revoked %v", &ev)
	}
	// A second logout with the dead session changes nothing and publishes nothing.
	n := len(h.events())
	h.expect(h.do("POST", "/api/auth/logout", nil, caller), 204, "")
	if len(h.events()) != n {
		t.Fatal("a repeated logout published again")
	}
}
