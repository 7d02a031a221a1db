package httpapi_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/callerid"
	"tori.dev/services/gateway/internal/logstreams"
)

// The caller's teams, the token's scope and pinned apps, and the client's address reach the
// service signed: a forged copy of any of them is stripped, and the address is the client's
// own (a whole IPv6 address, not the /64 the limits count it in).
func TestSignsTeamsScopeAppsAndClientAddress(t *testing.T) {
	h := start(t, options{trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	r := h.do("GET", "/api/apps/web", "svc_carol_deploy", nil,
		"X-Tori-Teams", "team-other:other:owner",
		"X-Tori-Scope", "",
		"X-Tori-Apps", "",
		"X-Tori-Client-Ip", "10.0.0.1",
		"X-Forwarded-For", "2001:db8:1:2:3:4:5:6")
	expect(t, r, 200, "")
	got := h.up.last(t)
	want := callerid.Caller{AccountID: "acct-c", UserID: "user-c", TokenKind: "api", TokenID: "t-carol-deploy",
		Teams: "team-acme:acme:developer", Scope: "deploy", Apps: "web,api", ClientIP: "2001:db8:1:2:3:4:5:6"}
	if got.Caller != want {
		t.Fatalf("caller %+v,\nwant   %+v", got.Caller, want)
	}
	for _, hd := range []string{"X-Tori-Teams", "X-Tori-Scope", "X-Tori-Apps", "X-Tori-Client-Ip"} {
		if vs := got.Header.Values(hd); len(vs) != 1 {
			t.Fatalf("%s reached the service %d times: %v", hd, len(vs), vs)
		}
	}

	// A session: every team, no scope, no pin; the peer's address without trusted proxies.
	h = start(t, options{})
	expect(t, h.do("GET", "/api/teams", "tok_carol", nil), 200, "")
	got = h.up.last(t)
	if got.Caller.Teams != "acct-c:carol:owner:personal;team-acme:acme:developer" || got.Caller.Scope != "" || got.Caller.Apps != "" || got.Caller.ClientIP != "127.0.0.1" {
		t.Fatalf("session caller %+v", got.Caller)
	}

	// Public routes stay anonymous: nothing about the client is claimed for a caller.
	expect(t, h.do("GET", "/api/plans", "", nil), 200, "")
	if got = h.up.last(t); got.Caller != (callerid.Caller{}) {
		t.Fatalf("public route signed %+v", got.Caller)
	}
}

// An API token past its end is 401 token_expired, the first time (identity says so) and
// after (remembered); an unknown token and an expired session stay the contract's plain 401.
func TestExpiredAPITokenIsTokenExpired(t *testing.T) {
	h := start(t, options{cache: true})
	for range 2 {
		r := h.do("GET", "/api/apps", "svc_expired", nil)
		expect(t, r, 401, "")
		body := r.json(t)
		if body["error"] != "token_expired" || body["code"] != "token_expired" || body["message"] == "" {
			t.Fatalf("body %s", r.Body)
		}
	}
	if n := h.up.introspections.Load(); n != 1 {
		t.Fatalf("%d introspections, want 1", n)
	}
	expect(t, h.do("GET", "/api/apps", "svc_nobody", nil), 401, `{"error":"unauthorized"}`)
	expect(t, h.do("GET", "/api/apps", "tok_expired", nil), 401, `{"error":"unauthorized"}`)
	if h.up.count() != 0 {
		t.Fatal("a refused request reached a service")
	}
}

// Revoking one of a team's tokens, or changing or removing a member, through this gateway
// takes effect here from the next request, before any event arrives: the token, or every
// token of that member, is introspected again.
func TestTeamRevocationsAndRoleChangesEvictAtOnce(t *testing.T) {
	h := start(t, options{cache: true})
	warm := func(tokens ...string) {
		t.Helper()
		for _, tok := range tokens {
			expect(t, h.do("GET", "/api/apps", tok, nil), 200, "")
		}
	}
	asked := func() int64 { return h.up.introspections.Load() }

	warm("svc_carol_deploy", "tok_carol", "svc_alice")
	n := asked()
	warm("svc_carol_deploy", "tok_carol", "svc_alice")
	if asked() != n {
		t.Fatal("not cached")
	}

	// A team's token revoked by an admin: that token alone.
	expect(t, h.do("DELETE", "/api/teams/acme/tokens/t-carol-deploy", "svc_alice", nil), 200, "")
	warm("svc_carol_deploy", "tok_carol", "svc_alice")
	if got := asked() - n; got != 1 {
		t.Fatalf("%d introspections after the revocation, want 1 (the revoked token)", got)
	}

	// A member's role changed, or the member removed: every token of theirs, no one else's.
	for _, method := range []string{"PATCH", "DELETE"} {
		n = asked()
		expect(t, h.do(method, "/api/teams/acme/members/user-c", "svc_alice", strings.NewReader(`{"role":"viewer"}`)), 200, "")
		warm("svc_carol_deploy", "tok_carol", "svc_alice")
		if got := asked() - n; got != 2 {
			t.Fatalf("%s member: %d introspections after, want 2 (both of Carol's tokens)", method, got)
		}
	}

	// Carol making a team (or accepting an invitation) acts in it at once: her own tokens go.
	for _, path := range []string{"/api/teams", "/api/invitations/accept"} {
		warm("svc_carol_deploy", "tok_carol", "svc_alice")
		n = asked()
		expect(t, h.do("POST", path, "tok_carol", strings.NewReader(`{}`)), 200, "")
		warm("svc_carol_deploy", "tok_carol", "svc_alice")
		// Both of Carol's tokens are asked about again; Alice's stays cached.
		if got := asked() - n; got != 2 {
			t.Fatalf("POST %s: %d introspections after, want 2 (both of Carol's tokens)", path, got)
		}
	}

	// A refused change (identity's 4xx) changed nothing, so nothing is dropped.
	n = asked()
	expect(t, h.do("PATCH", "/api/teams/acme/members/user-c?refuse=409", "svc_alice", strings.NewReader(`{}`)), 409, "")
	warm("svc_carol_deploy", "tok_carol")
	if asked() != n {
		t.Fatal("a change identity did not confirm dropped tokens")
	}
}

// A member's role changed through this gateway ends their open log streams (they reconnect
// and are checked with the new role), with access_changed; other people's streams go on.
func TestRoleChangeEndsTheMembersStreams(t *testing.T) {
	streams := logstreams.New(5, nil, nil)
	h := start(t, options{override: map[string]string{"logs": eventService(t, 0).URL}, streams: streams})
	_, carol, _ := openStream(t, h, "tok_carol")
	_, alice, _ := openStream(t, h, "tok_alice")
	expect(t, h.do("PATCH", "/api/teams/acme/members/user-c", "svc_alice", strings.NewReader(`{"role":"viewer"}`)), 200, "")
	var last []string
	deadline := time.After(5 * time.Second)
	for done := false; !done; {
		select {
		case l, ok := <-carol:
			if !ok {
				done = true
				break
			}
			last = append(last, l)
		case <-deadline:
			t.Fatal("the member's stream did not end")
		}
	}
	tail := strings.Join(last[max(0, len(last)-3):], "\n")
	if !strings.HasPrefix(tail, "event: close\ndata: {\"reason\":\"access_changed\"") {
		t.Fatalf("the stream ended with %q, want access_changed", tail)
	}
	select {
	case l, ok := <-alice:
		if !ok || strings.HasPrefix(l, "event: close") {
			t.Fatalf("another person's stream ended: %q", l)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("another person's stream stopped")
	}
	if streams.Count("acct-a") != 1 || streams.Count("acct-c") != 0 {
		t.Fatalf("open streams: alice %d carol %d", streams.Count("acct-a"), streams.Count("acct-c"))
	}
}
