package httpapi_test

import (
	"strings"
	"testing"
)

// Whatever route a request takes, public or private, with a body or without, idempotent or
// not, the service behind the gateway never receives the client's bearer token or cookies.
func TestNoServiceEverSeesACredential(t *testing.T) {
	h := start(t, options{})
	creds := []string{"Cookie", "session=s3cret; other=1", "X-Custom", "kept"}
	cases := []struct {
		method, path, token string
		body                string
		extra               []string
		status              int
	}{
		{"GET", "/api/plans", "svc_alice", "", nil, 200}, // public, token sent anyway
		{"GET", "/api/apps", "svc_alice", "", nil, 200},  // private
		{"PATCH", "/api/account", "tok_bob", `{"defaultRegion":"us"}`, nil, 200},
		{"POST", "/api/apps?status=201", "svc_alice", `{"name":"x"}`, []string{"Idempotency-Key", "k-1"}, 201},
		{"POST", "/api/apps/site/deploys", "svc_alice", "--xyz--\r\n", []string{"Content-Type", "multipart/form-data; boundary=xyz"}, 201},
		{"POST", "/api/auth/cli/token", "", `{"deviceCode":"known"}`, nil, 400},
		{"GET", "/api/apps", "svc_nobody", "", nil, 401}, // refused: still nothing forwarded
	}
	for _, tc := range cases {
		var body *strings.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		hdr := append(append([]string{}, creds...), tc.extra...)
		var r response
		if body != nil {
			r = h.do(tc.method, tc.path, tc.token, body, hdr...)
		} else {
			r = h.do(tc.method, tc.path, tc.token, nil, hdr...)
		}
		expect(t, r, tc.status, "")
	}
	if h.up.count() < 5 {
		t.Fatalf("only %d requests reached the service: the test proves nothing", h.up.count())
	}
	if n := h.up.credentials.Load(); n != 0 {
		t.Fatalf("%d requests reached a service with Authorization or Cookie", n)
	}
	if got := h.up.last(t).Header.Get("X-Custom"); got != "kept" {
		t.Fatalf("an ordinary header was dropped too: %q", got)
	}
}
