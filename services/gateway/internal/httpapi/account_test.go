package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// GET /api/account is answered from the gateway's copy of identity's answer once it has one:
// byte for byte and with the same content type, per account, and still counted against the
// account's window.
func TestAccountReadsAreAnsweredFromTheCopy(t *testing.T) {
	h := start(t, options{cache: true, accounts: true})
	first := h.do("GET", "/api/account", "svc_alice", nil)
	expect(t, first, 200, `{"account":"acct-a","version":0,"query":""}`)
	for range 5 {
		again := h.do("GET", "/api/account", "svc_alice", nil)
		if again.Status != 200 || string(again.Body) != string(first.Body) {
			t.Fatalf("copy answered %d %s, identity %s", again.Status, again.Body, first.Body)
		}
		if got, want := again.Header.Get("Content-Type"), first.Header.Get("Content-Type"); got != want {
			t.Fatalf("content type %q from the copy, %q from identity", got, want)
		}
	}
	if n := h.up.accountReads.Load(); n != 1 {
		t.Fatalf("identity read the account %d times, want 1", n)
	}
	// Another account is another copy, never alice's.
	expect(t, h.do("GET", "/api/account", "tok_bob", nil), 200, `{"account":"acct-b","version":0,"query":""}`)
	if n := h.up.accountReads.Load(); n != 2 {
		t.Fatalf("identity read accounts %d times, want 2", n)
	}
	// A query is not the URL the copy answers: identity sees it.
	expect(t, h.do("GET", "/api/account?x=1", "svc_alice", nil), 200, `{"account":"acct-a","version":0,"query":"x=1"}`)
	// HEAD is identity's to answer as well, and leaves the copy in place.
	if r := h.do("HEAD", "/api/account", "svc_alice", nil); r.Status != 200 || len(r.Body) != 0 {
		t.Fatalf("HEAD: %d %q", r.Status, r.Body)
	}
	if _, ok := h.views.Get("acct-a", time.Now()); !ok {
		t.Fatal("HEAD dropped the copy")
	}
	if n := h.up.accountReads.Load(); n != 4 {
		t.Fatalf("identity read accounts %d times, want 4", n)
	}
	// The copy counts in the window like any read: 600 a minute, the 601st refused. Eight
	// reads of alice's account were made above.
	for i := 8; i < 600; i++ {
		if r := h.do("GET", "/api/account", "svc_alice", nil); r.Status != 200 {
			t.Fatalf("read %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 429, "")
}

// A change of the account through this gateway drops its copy as soon as identity answered,
// so the caller reads its own write at once; so does identity's announcement (the revocation
// listener evicts on identity.account.updated).
func TestAChangeOfTheAccountDropsTheCopy(t *testing.T) {
	h := start(t, options{cache: true, accounts: true})
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, `{"account":"acct-a","version":0,"query":""}`)
	expect(t, h.do("GET", "/api/account", "tok_bob", nil), 200, `{"account":"acct-b","version":0,"query":""}`)
	expect(t, h.do("PATCH", "/api/account", "svc_alice", strings.NewReader(`{"defaultRegion":"us"}`)), 200, "")
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, `{"account":"acct-a","version":1,"query":""}`)
	// bob's copy was not alice's change: still the copy (identity would now say version 1).
	expect(t, h.do("GET", "/api/account", "tok_bob", nil), 200, `{"account":"acct-b","version":0,"query":""}`)
	h.views.Evict("acct-b") // what identity.account.updated for bob does
	expect(t, h.do("GET", "/api/account", "tok_bob", nil), 200, `{"account":"acct-b","version":1,"query":""}`)
}

// While the copy cannot be trusted (the listener is not hearing identity's events) every read
// goes to identity, and nothing is kept for later.
func TestAnUntrustedCopyIsNeitherUsedNorFilled(t *testing.T) {
	h := start(t, options{cache: false, accounts: true})
	for range 3 {
		expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, `{"account":"acct-a","version":0,"query":""}`)
	}
	if n := h.up.accountReads.Load(); n != 3 {
		t.Fatalf("identity read the account %d times, want 3", n)
	}
	if _, ok := h.views.Get("acct-a", time.Now()); ok {
		t.Fatal("an answer was kept while the copy is not trusted")
	}
}

// Only a 200 is kept: a read identity refused or failed is asked again.
func TestOnlyA200IsKept(t *testing.T) {
	h := start(t, options{cache: true, accounts: true})
	h.up.accountStatus.Store(http.StatusServiceUnavailable)
	if r := h.do("GET", "/api/account", "svc_alice", nil); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("identity failing: %d %s", r.Status, r.Body)
	}
	if _, ok := h.views.Get("acct-a", time.Now()); ok {
		t.Fatal("a failure was kept")
	}
	h.up.accountStatus.Store(0)
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, `{"account":"acct-a","version":0,"query":""}`)
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, `{"account":"acct-a","version":0,"query":""}`)
	if n := h.up.accountReads.Load(); n != 2 {
		t.Fatalf("identity read the account %d times, want 2 (the failure, then the answer kept)", n)
	}
}
