package httpapi_test

import (
	"strings"
	"testing"
)

func TestOneAccessLogLinePerRequestWithTrace(t *testing.T) {
	h := start(t, options{})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	r := h.do("GET", "/api/apps/blue-bird/logs?token=tok_in_query&limit=5", "svc_alice", nil,
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	expect(t, r, 200, "")
	h.do("GET", "/api/account", "", nil)

	// The service's request joined the client's trace, as a child of the gateway's span.
	up := h.up.last(t)
	parts := strings.Split(up.Header.Get("Traceparent"), "-")
	if len(parts) != 4 || parts[1] != traceID || parts[2] == "00f067aa0ba902b7" {
		t.Fatalf("upstream traceparent %q", up.Header.Get("Traceparent"))
	}

	lines := h.logs.Lines(t)
	var access []map[string]any
	for _, l := range lines {
		if l["msg"] == "request" {
			access = append(access, l)
		}
	}
	if len(access) != 2 {
		t.Fatalf("%d access lines, want 2: %v", len(access), lines)
	}
	first := access[0]
	if first["method"] != "GET" || first["route"] != "/api/apps/{slug}/logs" || first["status"] != float64(200) {
		t.Fatalf("access line %v", first)
	}
	if first["trace_id"] != traceID || first["service"] != "gateway" {
		t.Fatalf("access line without the trace: %v", first)
	}
	if _, ok := first["duration_ms"].(float64); !ok {
		t.Fatalf("no duration: %v", first)
	}
	if second := access[1]; second["status"] != float64(401) || second["route"] != "/api/account" {
		t.Fatalf("second line %v", second)
	}

	all := h.logs.String()
	for _, secret := range []string{"svc_alice", "tok_in_query", "Bearer", "blue-bird"} {
		if strings.Contains(all, secret) {
			t.Fatalf("log contains %q:\n%s", secret, all)
		}
	}
}

func TestPreflightNeedsNoTokenAndReachesNoService(t *testing.T) {
	h := start(t, options{})
	r := h.do("OPTIONS", "/api/account", "", nil,
		"Origin", consoleOrigin,
		"Access-Control-Request-Method", "PATCH",
		"Access-Control-Request-Headers", "authorization,content-type")
	expect(t, r, 204, "")
	if r.Header.Get("Access-Control-Allow-Origin") != consoleOrigin || r.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("preflight headers %v", r.Header)
	}
	r = h.do("OPTIONS", "/api/account", "", nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "GET")
	for k := range r.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Fatalf("foreign preflight got %s", k)
		}
	}
	if h.up.count() != 0 {
		t.Fatal("preflight forwarded")
	}
}

func TestCORSOnForwardedResponses(t *testing.T) {
	h := start(t, options{})
	r := h.do("GET", "/api/account", "svc_alice", nil, "Origin", consoleOrigin)
	expect(t, r, 200, "")
	if got := r.Header.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != consoleOrigin {
		t.Fatalf("allow origin %v (the service sent *)", got)
	}
	if !strings.Contains(r.Header.Get("Vary"), "Origin") {
		t.Fatalf("Vary %q", r.Header.Get("Vary"))
	}
	r = h.do("GET", "/api/account", "svc_alice", nil, "Origin", "https://evil.example")
	expect(t, r, 200, "")
	for k := range r.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Fatalf("foreign origin got %s", k)
		}
	}
}
