package httpapi_test

import (
	"strings"
	"testing"

	"tori.dev/pkg/callerid"
)

func TestHealthzAndOpenAPIAreLocalAndPublic(t *testing.T) {
	h := start(t, options{})
	r := h.do("GET", "/healthz", "", nil)
	expect(t, r, 200, "")
	m := r.json(t)
	for _, k := range []string{"service", "version", "instance", "startedAt"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("healthz lacks %s: %s", k, r.Body)
		}
	}
	if m["service"] != "gateway" {
		t.Fatalf("service %v", m["service"])
	}

	r = h.do("GET", "/api/openapi.json", "", nil)
	expect(t, r, 200, "")
	if string(r.Body) != openAPIDoc {
		t.Fatalf("document not served as it is: %s", r.Body)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("content type %q", r.Header.Get("Content-Type"))
	}
	if h.up.count() != 0 {
		t.Fatal("local routes reached an upstream")
	}
}

func TestPublicRoutesAreForwardedWithASignedEmptyCaller(t *testing.T) {
	h := start(t, options{})
	for _, rt := range []struct{ method, path string }{
		{"GET", "/api/plans"},
		{"POST", "/api/auth/magic-link"},
		{"POST", "/api/auth/magic-link/verify"},
		{"POST", "/api/auth/cli/device"},
	} {
		r := h.do(rt.method, rt.path, "", strings.NewReader(`{}`))
		expect(t, r, 200, "")
		got := h.up.last(t)
		if got.RequestURI != rt.path || got.Caller != (callerid.Caller{}) {
			t.Fatalf("%s %s: upstream saw %s as %+v", rt.method, rt.path, got.RequestURI, got.Caller)
		}
	}
}

func TestPrivateRoutesNeedAValidToken(t *testing.T) {
	h := start(t, options{})
	unauthorized := `{"error":"unauthorized"}`
	for _, tc := range []struct{ name, header string }{
		{"missing", ""},
		{"not bearer", "Basic c3ZjX2FsaWNlOg=="},
		{"malformed", "Bearer alice"},
		{"unknown", "Bearer svc_nobody"},
		{"expired", "Bearer tok_expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.header != "" {
				hdr = []string{"Authorization", tc.header}
			}
			for _, path := range []string{"/api/account", "/api/apps", "/api/apps/x/deploys", "/api/nowhere", "/api/auth/logout"} {
				r := h.do("GET", path, "", nil, hdr...)
				expect(t, r, 401, unauthorized)
			}
		})
	}
	if h.up.count() != 0 {
		t.Fatal("an unauthenticated request reached a service")
	}
	// A public path with a method that is not public needs a token too.
	expect(t, h.do("POST", "/api/plans", "", nil), 401, unauthorized)
}

func TestForwardsRequestAsSentAndSignsTheCaller(t *testing.T) {
	h := start(t, options{})
	path := "/api/apps/blue-bird/logs?start=2026-11-22T01%3A00%3A00.000Z&limit=5&x=a+b"
	r := h.do("GET", path, "svc_alice", nil,
		"X-Tori-Account", "acct-evil",
		"X-Tori-Signature", "forged",
		"X-Custom", "kept")
	expect(t, r, 200, "")
	got := h.up.last(t)
	if got.RequestURI != path {
		t.Fatalf("upstream saw %q, want %q", got.RequestURI, path)
	}
	want := callerid.Caller{AccountID: "acct-a", UserID: "user-a", TokenKind: "api", TokenID: "t-alice", ClientIP: "127.0.0.1"}
	if got.Caller != want {
		t.Fatalf("caller %+v, want %+v", got.Caller, want)
	}
	if got.Header.Get("X-Custom") != "kept" {
		t.Fatalf("headers not forwarded: %v", got.Header)
	}
	if vs := got.Header.Values("X-Tori-Account"); len(vs) != 1 || vs[0] != "acct-a" {
		t.Fatalf("inbound X-Tori-Account survived: %v", vs)
	}
	if got.Header.Get("Traceparent") == "" {
		t.Fatal("no trace context upstream")
	}
	if got.Header.Get("X-Forwarded-For") != "127.0.0.1" {
		t.Fatalf("X-Forwarded-For %q", got.Header.Get("X-Forwarded-For"))
	}

	if got.ContentLength != 0 || len(got.TransferEncoding) != 0 {
		t.Fatalf("a GET without a body went upstream with length %d, encoding %v", got.ContentLength, got.TransferEncoding)
	}

	r = h.do("PATCH", "/api/account", "tok_bob", strings.NewReader(`{"defaultRegion":"us"}`))
	expect(t, r, 200, "")
	got = h.up.last(t)
	if got.Method != "PATCH" || got.Caller.AccountID != "acct-b" || got.Caller.TokenKind != "session" {
		t.Fatalf("upstream saw %+v", got)
	}
	if got.ContentLength != int64(len(`{"defaultRegion":"us"}`)) {
		t.Fatalf("declared length not kept: %d", got.ContentLength)
	}
}

func TestHopByHopHeadersStayBehind(t *testing.T) {
	h := start(t, options{})
	r := h.do("GET", "/api/account", "svc_alice", nil,
		"Connection", "X-Hop", "X-Hop", "1", "Te", "trailers", "Proxy-Authorization", "Basic eA==")
	expect(t, r, 200, "")
	got := h.up.last(t)
	for _, k := range []string{"X-Hop", "Proxy-Authorization"} {
		if got.Header.Get(k) != "" {
			t.Fatalf("%s forwarded", k)
		}
	}
}

func TestServiceHeadersAreFiltered(t *testing.T) {
	h := start(t, options{})
	r := h.do("GET", "/api/apps", "svc_alice", nil)
	expect(t, r, 200, "")
	noRateLimitHeaders(t, r)
	for k := range r.Header {
		if strings.HasPrefix(k, "X-Tori-") || strings.HasPrefix(k, "Access-Control-") {
			t.Fatalf("response carries %s", k)
		}
	}
	if r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("service's content type lost: %q", r.Header.Get("Content-Type"))
	}
	if m := r.json(t); m["account"] != "acct-a" {
		t.Fatalf("body %s", r.Body)
	}
}

// A service that is not listening makes only its own routes 503 service_unavailable, in the
// contract's error shape, naming the service; every other route keeps working.
func TestServiceDownIsServiceUnavailable(t *testing.T) {
	h := start(t, options{down: []string{"billing", "databases"}})
	want := `{"error":"service_unavailable","code":"service_unavailable","message":"The billing service is not answering; retry shortly."}`
	r := h.do("GET", "/api/billing", "svc_alice", nil)
	expect(t, r, 503, want)
	expect(t, h.do("POST", "/api/billing/checkout", "svc_alice", strings.NewReader(`{"plan":"flock"}`)), 503, want)
	r = h.do("GET", "/api/plans", "", nil)
	expect(t, r, 503, want)
	for _, p := range []string{"/api/apps/blue/database", "/api/apps/blue/database/dumps"} {
		expect(t, h.do("GET", p, "svc_alice", nil), 503,
			`{"error":"service_unavailable","code":"service_unavailable","message":"The databases service is not answering; retry shortly."}`)
	}
	expect(t, h.do("GET", "/api/apps", "svc_alice", nil), 200, "")
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, "")
	// A request without a body leaves nothing unread on the connection: it stays open.
	if r.Header.Get("Connection") == "close" {
		t.Fatal("connection closed after a bodiless request")
	}
	if strings.Contains(h.logs.String(), "panic") {
		t.Fatal("panic logged")
	}
}

func TestIdentityDownIsServiceUnavailable(t *testing.T) {
	h := start(t, options{down: []string{"identity"}})
	r := h.do("GET", "/api/apps", "svc_alice", nil)
	expect(t, r, 503, "")
	if m := r.json(t); m["error"] != "service_unavailable" || m["code"] != "service_unavailable" || m["message"] == "" {
		t.Fatalf("body %s", r.Body)
	}
}

func TestPathsNobodyOwnsAreNotFound(t *testing.T) {
	h := start(t, options{})
	for _, p := range []string{"/api/nowhere", "/", "/internal/introspect", "/api/plans/../account", "/api/apps/x/logs/extra"} {
		expect(t, h.do("GET", p, "svc_alice", nil), 404, `{"error":"not found"}`)
	}
	if h.up.count() != 0 {
		t.Fatal("forwarded a path nobody owns")
	}
	// Unlisted paths under a service's prefix go to that service.
	expect(t, h.do("GET", "/api/apps/x/deploys/d1/events", "svc_alice", nil), 200, "")
	if got := h.up.last(t); got.RequestURI != "/api/apps/x/deploys/d1/events" {
		t.Fatalf("upstream saw %s", got.RequestURI)
	}
}

// The gateway is ready once every service it routes to is; before, /readyz names the ones
// it waits for. A burst of /readyz reaches each service once, not once per request.
func TestReadyzFollowsTheServices(t *testing.T) {
	h := start(t, options{down: []string{"logs", "apps"}})
	r := h.do("GET", "/readyz", "", nil)
	expect(t, r, 503, `{"code":"not_ready","error":"not_ready","waiting":["apps","logs"]}`)
	for i := 0; i < 100; i++ {
		h.do("GET", "/readyz", "", nil)
	}
	if n := h.up.readyProbes.Load(); n > 8 { // four live services, asked once a second at most
		t.Fatalf("100 /readyz asked the services %d times", n)
	}

	up := start(t, options{})
	expect(t, up.do("GET", "/readyz", "", nil), 200, `{"ready":true}`)
}
