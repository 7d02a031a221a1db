package e2e

import (
	"net/http"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// Offices, CI fleets and carriers share addresses: a neighbour's bad tokens must not lock a
// valid one out. 1,200 requests with bogus tokens from 127.0.0.1 end in 429; then a session
// signed in before them, one signed in after them and an API token, all from 127.0.0.1,
// answer 200 on every kind of route.
func TestBogusTokensDoNotLockOutValidOnes(t *testing.T) {
	s := defaultStack(t)
	before := s.NewAccount(t, "before-flood")
	if r := s.Get(t, "/api/account", before.Token); r.Status != http.StatusOK {
		t.Fatalf("before the flood: %d", r.Status)
	}

	// 1,000 requests with one bogus token (identity asked once, the rest refused from the
	// gateway's memory of it), then 200 with a new bogus token each (each one asked about).
	counts := burst(t, s, 1000, harness.Request{Method: http.MethodGet, Path: "/api/apps", Token: "svc_bogus" + harness.Hex(8)}, nil)
	t.Logf("1,000 requests with a bogus token: %v", counts)
	bogus := map[int]int{}
	for i := range 200 {
		r := s.Get(t, "/api/apps", "svc_bogus"+harness.Hex(8))
		if i == 0 || i == 199 {
			expectRateLimited(t, r, "rate_limited")
		}
		bogus[r.Status]++
	}
	if bogus[http.StatusTooManyRequests] != 200 || counts[http.StatusTooManyRequests] == 0 {
		t.Fatalf("bogus tokens past the budget: %v, %v", counts, bogus)
	}
	// The same bogus token, again: 429.
	expectRateLimited(t, s.Get(t, "/api/account", "svc_bogus-again"), "rate_limited")
	expectRateLimited(t, s.Get(t, "/api/account", "svc_bogus-again"), "rate_limited")

	after := s.NewAccount(t, "after-flood")
	// A third account's API token, so each account creates one app (the free plan's).
	api := post(s, t, "/api/tokens", s.NewAccount(t, "api-after-flood").Token, map[string]string{"name": "ci"})
	if api.Status != http.StatusCreated {
		t.Fatalf("minting an API token after the flood: %d %s", api.Status, api.Body)
	}
	apiToken := api.Map(t)["token"].(string)

	for _, tok := range []struct{ name, token string }{{"session from before", before.Token}, {"session from after", after.Token}, {"API token", apiToken}} {
		t.Run(tok.name, func(t *testing.T) {
			slug := "flood-" + harness.Hex(4)
			for _, req := range []harness.Request{
				{Method: http.MethodGet, Path: "/api/account"},
				{Method: http.MethodGet, Path: "/api/billing"},
				{Method: http.MethodGet, Path: "/api/tokens"},
				{Method: http.MethodGet, Path: "/api/apps"},
				{Method: http.MethodPatch, Path: "/api/account", Body: map[string]string{"defaultRegion": "us"}},
				{Method: http.MethodPost, Path: "/api/apps", Body: map[string]string{"name": slug}},
				{Method: http.MethodGet, Path: "/api/apps/" + slug},
				{Method: http.MethodGet, Path: "/api/apps/" + slug + "/env"},
				{Method: http.MethodGet, Path: "/api/apps/" + slug + "/deploys"},
				{Method: http.MethodGet, Path: "/api/apps/" + slug + "/logs"},
				{Method: http.MethodGet, Path: "/api/apps/" + slug + "/database/dumps"},
			} {
				req.Token = tok.token
				r := s.Do(t, req)
				if r.Status/100 != 2 && !(r.Status == http.StatusNotFound && req.Path == "/api/apps/"+slug+"/database/dumps") {
					t.Fatalf("%s %s: %d %s", req.Method, req.Path, r.Status, r.Body)
				}
			}
		})
	}
	// And bogus tokens are still refused.
	expectRateLimited(t, s.Get(t, "/api/apps", "svc_bogus-last"), "rate_limited")
}
