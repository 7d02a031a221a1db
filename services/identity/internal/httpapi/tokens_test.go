package httpapi_test

import (
	"strings"
	"testing"

	identityv1 "tori.dev/proto/gen/tori/identity/v1"
)

func TestAPITokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, ada := h.signIn("ada@example.com")
	_, bob := h.signIn("bob@example.com")

	if l := h.do("GET", "/api/tokens", nil, ada); l.status != 200 || string(l.body) != "[]" {
		t.Fatalf("empty list: %d %s", l.status, l.body)
	}
	for _, name := range []string{"", "   ", strings.Repeat("x", 101)} {
		h.expect(h.do("POST", "/api/tokens", map[string]string{"name": name}, ada), 400, "invalid_name")
	}
	h.expect(h.raw("POST", "/api/tokens", []byte(`{"name":`), ada), 400, "invalid_body")

	r := h.do("POST", "/api/tokens", map[string]string{"name": " laptop "}, ada)
	h.expect(r, 201, "")
	created := r.json(t)
	if got := keys(created); got != "createdAt,id,name,prefix,token" { // the seed's shape: a full token shows no scope
		t.Fatalf("create shape %s", got)
	}
	secret := created["token"].(string)
	if !strings.HasPrefix(secret, "svc_") || created["prefix"] != secret[:8] || created["name"] != "laptop" ||
		created["createdAt"] != h.clock.Now().Format("2006-01-02T15:04:05.000Z") ||
		created["team"] != nil || created["scopes"] != nil || created["apps"] != nil || created["expiresAt"] != nil {
		t.Fatalf("created %v", created)
	}

	// An API token cannot mint another.
	apiCaller := h.callerOf(secret)
	h.expect(h.do("POST", "/api/tokens", map[string]string{"name": "child"}, apiCaller), 403, "session_required")

	// The list never carries the secret, and is the account's own.
	list := h.do("GET", "/api/tokens", nil, apiCaller).list(t)
	if len(list) != 1 || keys(list[0]) != "createdAt,id,lastUsedAt,name,prefix" || list[0]["id"] != created["id"] {
		t.Fatalf("list %v", list)
	}
	if r := h.do("GET", "/api/tokens", nil, ada); strings.Contains(string(r.body), secret) {
		t.Fatal("the list shows the secret")
	}
	if l := h.do("GET", "/api/tokens", nil, bob).list(t); len(l) != 0 {
		t.Fatalf("bob sees %v", l)
	}

	id := created["id"].(string)
	// Another well-formed id: the last character changed, never to itself.
	other := id[:35] + map[bool]string{true: "1", false: "0"}[id[35] == '0']
	for _, bad := range []string{"/api/tokens/" + other, "/api/tokens/not-a-uuid"} {
		h.expect(h.do("DELETE", bad, nil, ada), 404, "not found")
	}
	h.expect(h.do("DELETE", "/api/tokens/"+id, nil, bob), 404, "not found")
	r = h.do("DELETE", "/api/tokens/"+id, nil, ada)
	h.expect(r, 204, "")
	if len(r.body) != 0 {
		t.Fatalf("204 with body %q", r.body)
	}
	h.expect(h.do("POST", "/internal/introspect", map[string]string{"token": secret}, anonymous), 401, "unauthorized")
	var ev identityv1.TokenRevoked
	h.lastEvent("identity.token.revoked", &ev)
	if ev.TokenId != id || ev.AccountId != ada.AccountID {
		t.Fatalf("token.revoked %v", &ev)
	}
	h.expect(h.do("DELETE", "/api/tokens/"+id, nil, ada), 404, "not found")
	if l := h.do("GET", "/api/tokens", nil, ada).list(t); len(l) != 0 {
		t.Fatalf("revoked token still listed: %v", l)
	}
}
