package httpapi_test

import (
	"strings"
	"testing"
)

// The answers of routes that mint credentials are never kept: a repeat of a successful one
// answers 409 idempotency_key_reused saying why, and does not act again; a refused one (no
// secret in it) is repeated as any other.
func TestMintedCredentialsAreNotKept(t *testing.T) {
	h := start(t, options{authLimit: 100000})
	acted := func() int64 { return h.up.acted.Load() }
	for _, path := range []string{"/api/tokens", "/api/auth/magic-link/verify", "/api/auth/cli/token", "/api/auth/cli/authorize"} {
		t.Run(path, func(t *testing.T) {
			key := "k-mint-" + strings.ReplaceAll(path, "/", "-")
			first := h.post(path+"?status=201", "tok_alice", key, `{"name":"ci"}`)
			expect(t, first, 201, "")
			before := acted()
			again := h.post(path+"?status=201", "tok_alice", key, `{"name":"ci"}`)
			conflict(t, again, "idempotency_key_reused")
			if m := again.json(t); !strings.Contains(m["message"].(string), "credential") || again.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("repeat of a minting answer: %s", again.Body)
			}
			if strings.Contains(string(again.Body), `"n":`) {
				t.Fatal("the repeat carried the first answer")
			}
			if acted() != before {
				t.Fatal("the repeat acted again")
			}
			refused := h.post(path+"?status=400", "tok_alice", key+"-refused", `{}`)
			expect(t, refused, 400, "")
			sameAnswer(t, refused, h.post(path+"?status=400", "tok_alice", key+"-refused", `{}`))
		})
	}
}

// A key's repeat is answered only to the principal type and account that made the first
// request: the same key from an API token of the same account is a new request.
func TestIdempotentRepeatsStayWithTheirPrincipal(t *testing.T) {
	h := start(t, options{})
	first := h.post("/api/apps?status=201", "tok_alice", "k-principal", `{"name":"a"}`)
	expect(t, first, 201, "")
	before := h.up.acted.Load()
	other := h.post("/api/apps?status=201", "svc_alice", "k-principal", `{"name":"a"}`)
	expect(t, other, 201, "")
	if other.Header.Get("Idempotent-Replayed") != "" || h.up.acted.Load() != before+1 || string(other.Body) == string(first.Body) {
		t.Fatalf("an API token got the session's answer: %s", other.Body)
	}
	sameAnswer(t, first, h.post("/api/apps?status=201", "tok_alice", "k-principal", `{"name":"a"}`))
}
