package httpapi_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/httpapi"
)

// Every /api and /internal route answers 401 unless the gateway signed the request, and the
// private ones also need a signed caller with a token.
func TestRoutesNeedTheGatewaySignature(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	routes := []struct {
		method, path string
		public       bool
	}{
		{"POST", "/api/auth/magic-link", true},
		{"POST", "/api/auth/magic-link/verify", true},
		{"POST", "/api/auth/cli/device", true},
		{"POST", "/api/auth/cli/token", true},
		{"POST", "/internal/introspect", true},
		{"POST", "/api/auth/logout", false},
		{"POST", "/api/auth/cli/approve", false},
		{"POST", "/api/auth/cli/deny", false},
		{"POST", "/api/auth/cli/authorize", false},
		{"GET", "/api/tokens", false},
		{"POST", "/api/tokens", false},
		{"DELETE", "/api/tokens/0190f5e4-0000-7000-8000-000000000000", false},
		{"GET", "/api/account", false},
		{"PATCH", "/api/account", false},
	}
	for _, rt := range routes {
		// No signature at all.
		h.expect(h.raw(rt.method, rt.path, []byte(`{}`), nil), 401, "unauthorized")

		// Signed with another key.
		req := httptest.NewRequest(rt.method, rt.path, nil)
		callerid.Sign([]byte("not the key"), req.Header.Set, callerid.Caller{}, rt.method, req.Host, rt.path, time.Now())
		res, _ := h.app.Test(req, -1)
		if res.StatusCode != 401 {
			t.Errorf("%s %s with a foreign signature: %d", rt.method, rt.path, res.StatusCode)
		}

		// Signed for another path: a captured signature cannot be replayed elsewhere.
		req = httptest.NewRequest(rt.method, rt.path, nil)
		callerid.Sign(signingKey, req.Header.Set, callerid.Caller{}, rt.method, req.Host, "/api/other", time.Now())
		if res, _ := h.app.Test(req, -1); res.StatusCode != 401 {
			t.Errorf("%s %s with a signature for another path: %d", rt.method, rt.path, res.StatusCode)
		}

		// Signed, but without a caller.
		if !rt.public {
			h.expect(h.raw(rt.method, rt.path, []byte(`{}`), anonymous), 401, "unauthorized")
		}
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.raw("GET", "/healthz", nil, nil)
	h.expect(r, 200, "")
	if got := keys(r.json(t)); got != "commit,instance,service,startedAt,version" {
		t.Fatalf("healthz shape %s", got)
	}
}

func TestUnknownRouteIsJSON404(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.expect(h.raw("GET", "/api/nothing", nil, anonymous), 404, "not found")
}

// Introspection's 401 for a token identity does not know carries X-Tori-Token-Unknown; a
// 401 for a signature identity refused does not, so the gateway never takes a refused
// signature for an unknown token.
func TestIntrospectionTellsAnUnknownTokenFromARefusedSignature(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.do("POST", "/internal/introspect", map[string]string{"token": "svc_nobody"}, anonymous)
	h.expect(r, 401, "unauthorized")
	if r.header.Get(httpapi.HeaderTokenUnknown) != "1" {
		t.Fatalf("unknown token: header %q, want 1", r.header.Get(httpapi.HeaderTokenUnknown))
	}
	r = h.do("POST", "/internal/introspect", map[string]string{"token": "svc_nobody"}, nil)
	h.expect(r, 401, "unauthorized")
	if v := r.header.Get(httpapi.HeaderTokenUnknown); v != "" {
		t.Fatalf("unsigned request: header %q, want none", v)
	}
}
