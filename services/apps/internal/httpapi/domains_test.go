package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/usecase"
)

func newChecker(s *apptest.Service, d *apptest.DNS) *usecase.HostnameChecker {
	return &usecase.HostnameChecker{
		Store: s.Store, Resolver: d.Resolver(), Interval: time.Millisecond,
		Log: s.Log, Now: time.Now, Batch: 100,
	}
}

// checkRound runs one verification round after the previous one's look-ups are due again.
func checkRound(t *testing.T, c *usecase.HostnameChecker) int64 {
	t.Helper()
	// Moving the checker's clock past its interval is all the passing of time it needs.
	c.Now = advanced(c.Now, c.Interval)
	n, err := c.CheckOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// advanced is now moved on by d, for every later reading too.
func advanced(now func() time.Time, d time.Duration) func() time.Time {
	at := now().Add(d)
	return func() time.Time { return at }
}

func domainOf(t *testing.T, s *apptest.Service, acct, slug, host string) map[string]any {
	t.Helper()
	var list []map[string]any
	s.Must(http.StatusOK, acct, http.MethodGet, "/api/apps/"+slug+"/domains", nil).JSON(t, &list)
	for _, d := range list {
		if d["hostname"] == host {
			return d
		}
	}
	t.Fatalf("%s has no %s: %v", slug, host, list)
	return nil
}

func checkDomain(t *testing.T, d map[string]any, host, status string) {
	t.Helper()
	v, _ := d["verification"].(map[string]any)
	c, _ := d["certificate"].(map[string]any)
	if c == nil || len(c) != 3 || c["status"] == nil {
		t.Errorf("domain %v: no certificate", d)
	}
	if d["hostname"] != host || d["status"] != status || len(d) != 5 || v == nil || len(v) != 3 ||
		v["type"] != "TXT" || v["name"] != "_tori-challenge."+host ||
		!strings.HasPrefix(v["value"].(string), "tori-verify=") || len(v["value"].(string)) < len("tori-verify=")+20 {
		t.Errorf("domain %v, want %s %s with its verification", d, host, status)
	}
	if _, err := time.Parse(time.RFC3339Nano, d["createdAt"].(string)); err != nil {
		t.Errorf("createdAt %v", d["createdAt"])
	}
}

func TestNestlingMayAddNoHostname(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "site"})
	r := s.Do(acct, http.MethodPost, "/api/apps/site/domains", map[string]any{"hostname": "www.example.com"})
	m := r.Map(t)
	if r.Status != http.StatusForbidden || m["error"] != "domain_limit_reached" || m["code"] != "domain_limit_reached" ||
		m["limit"] != float64(0) || m["plan"] != "nestling" {
		t.Fatalf("nestling add: %d %s", r.Status, r.Body)
	}
}

func TestHostnameRules(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.SetPlan(acct, "songbird", 1) // five hostnames
	s.CreateApp(acct, map[string]any{"name": "site"})
	s.CreateApp(acct, map[string]any{"name": "svc", "kind": "service"})

	if r := s.Do(acct, http.MethodPost, "/api/apps/svc/domains", map[string]any{"hostname": "svc.example.com"}); r.Status != http.StatusBadRequest || r.Map(t)["error"] != "static_only" {
		t.Errorf("service app: %d %s", r.Status, r.Body)
	}
	for _, h := range []any{"apps.localhost", "x.apps.localhost", "a.b.apps.localhost", "localhost", "com", "",
		"1.2.3.4", "[::1]", "::1", "*.example.com", "Example.com", "-a.example.com", "a-.example.com", "a..example.com",
		"exa mple.com", "exa_mple.com", "example.com/x", "http://example.com", strings.Repeat("a", 64) + ".com",
		strings.Repeat("abcdefghi.", 26) + "com", 42, nil} {
		body := map[string]any{}
		if h != nil {
			body["hostname"] = h
		}
		if r := s.Do(acct, http.MethodPost, "/api/apps/site/domains", body); r.Status != http.StatusBadRequest || r.Map(t)["error"] != "invalid_hostname" {
			t.Errorf("hostname %#v: %d %s", h, r.Status, r.Body)
		}
	}
	// A trailing dot is the same name.
	d := s.Must(http.StatusCreated, acct, http.MethodPost, "/api/apps/site/domains", map[string]any{"hostname": "www.example.com."}).Map(t)
	checkDomain(t, d, "www.example.com", "pending")
	if r := s.Do(acct, http.MethodPost, "/api/apps/site/domains", map[string]any{"hostname": "www.example.com"}); r.Status != http.StatusConflict || r.Map(t)["error"] != "domain_exists" {
		t.Errorf("the same hostname twice: %d %s", r.Status, r.Body)
	}
	for _, h := range []string{"example.com", "xn--bcher-kva.example", "a-b.c0.example.org", "deep.sub.domain.example.co.uk"} {
		checkDomain(t, s.Must(http.StatusCreated, acct, http.MethodPost, "/api/apps/site/domains", map[string]any{"hostname": h}).Map(t), h, "pending")
	}
	// Songbird's five are used: the sixth is refused.
	r := s.Do(acct, http.MethodPost, "/api/apps/site/domains", map[string]any{"hostname": "sixth.example.com"})
	if m := r.Map(t); r.Status != http.StatusForbidden || m["code"] != "domain_limit_reached" || m["limit"] != float64(5) || m["plan"] != "songbird" {
		t.Fatalf("sixth hostname: %d %s", r.Status, r.Body)
	}
	var list []map[string]any
	s.Must(http.StatusOK, acct, http.MethodGet, "/api/apps/site/domains", nil).JSON(t, &list)
	if len(list) != 5 {
		t.Fatalf("list %v", list)
	}
	for _, d := range list {
		checkDomain(t, d, d["hostname"].(string), "pending")
	}
	// Removing frees a place; removing again is 404.
	s.Must(http.StatusNoContent, acct, http.MethodDelete, "/api/apps/site/domains/example.com", nil)
	if r := s.Do(acct, http.MethodDelete, "/api/apps/site/domains/example.com", nil); r.Status != http.StatusNotFound {
		t.Errorf("second delete: %d", r.Status)
	}
	s.Must(http.StatusCreated, acct, http.MethodPost, "/api/apps/site/domains", map[string]any{"hostname": "sixth.example.com"})
	if r := s.Do(acct, http.MethodPost, "/api/apps/site/domains", "{"); r.Status != http.StatusBadRequest {
		t.Errorf("malformed body: %d", r.Status)
	}
}

func TestPendingClaimsNeverBlockAndActiveHostnamesBelongToOneApp(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	dns := apptest.StartDNS(t)
	checker := newChecker(s, dns)
	squatter, owner, latecomer := apptest.NewAccount(), apptest.NewAccount(), apptest.NewAccount()
	for _, a := range []string{squatter, owner, latecomer} {
		s.SetPlan(a, "songbird", 1)
	}
	s.CreateApp(squatter, map[string]any{"name": "squat"})
	s.CreateApp(owner, map[string]any{"name": "real"})
	s.CreateApp(latecomer, map[string]any{"name": "late"})
	const host = "shop.example.com"

	// Someone else's pending claim does not stop the real owner from adding it.
	s.Must(http.StatusCreated, squatter, http.MethodPost, "/api/apps/squat/domains", map[string]any{"hostname": host})
	mine := s.Must(http.StatusCreated, owner, http.MethodPost, "/api/apps/real/domains", map[string]any{"hostname": host}).Map(t)
	if n := checkRound(t, checker); n != 0 {
		t.Fatalf("%d activated without any record", n)
	}
	// A record with the wrong value proves nothing.
	dns.SetTXT("_tori-challenge."+host, "tori-verify=not-it")
	if n := checkRound(t, checker); n != 0 {
		t.Fatal("activated by a wrong value")
	}
	dns.SetTXT("_tori-challenge."+host, "unrelated", mine["verification"].(map[string]any)["value"].(string))
	if n := checkRound(t, checker); n != 1 {
		t.Fatalf("activated %d, want the owner's one", n)
	}
	checkDomain(t, domainOf(t, s, owner, "real", host), host, "active")
	checkDomain(t, domainOf(t, s, squatter, "squat", host), host, "pending")
	if k := s.OutboxKeys(); !slices.Contains(k, "apps.domain.activated") {
		t.Fatalf("no activation event: %v", k)
	}
	// Now it is taken, for every other app of any account.
	if r := s.Do(latecomer, http.MethodPost, "/api/apps/late/domains", map[string]any{"hostname": host}); r.Status != http.StatusConflict || r.Map(t)["error"] != "hostname taken" {
		t.Fatalf("active elsewhere: %d %s", r.Status, r.Body)
	}
	// The squatter proving it too later changes nothing: the first to verify keeps it.
	sq := domainOf(t, s, squatter, "squat", host)
	dns.SetTXT("_tori-challenge."+host, mine["verification"].(map[string]any)["value"].(string), sq["verification"].(map[string]any)["value"].(string))
	if n := checkRound(t, checker); n != 0 {
		t.Fatal("a second app activated an active hostname")
	}
	checkDomain(t, domainOf(t, s, squatter, "squat", host), host, "pending")

	// Removing the active hostname frees it and tells the edge.
	s.Must(http.StatusNoContent, owner, http.MethodDelete, "/api/apps/real/domains/"+host, nil)
	if k := s.OutboxKeys(); k[len(k)-1] != "apps.domain.removed" {
		t.Fatalf("no removal event: %v", k)
	}
	if n := checkRound(t, checker); n != 1 {
		t.Fatal("the squatter's proven claim did not activate once the hostname was free")
	}
	checkDomain(t, domainOf(t, s, squatter, "squat", host), host, "active")
}

func TestFirstToVerifyWins(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	dns := apptest.StartDNS(t)
	a, b := apptest.NewAccount(), apptest.NewAccount()
	s.SetPlan(a, "songbird", 1)
	s.SetPlan(b, "songbird", 1)
	s.CreateApp(a, map[string]any{"name": "aa"})
	s.CreateApp(b, map[string]any{"name": "bb"})
	const host = "race.example.org"
	da := s.Must(http.StatusCreated, a, http.MethodPost, "/api/apps/aa/domains", map[string]any{"hostname": host}).Map(t)
	db := s.Must(http.StatusCreated, b, http.MethodPost, "/api/apps/bb/domains", map[string]any{"hostname": host}).Map(t)
	dns.SetTXT("_tori-challenge."+host, da["verification"].(map[string]any)["value"].(string), db["verification"].(map[string]any)["value"].(string))
	// Two checkers (two service instances) at once.
	c1, c2 := newChecker(s, dns), newChecker(s, dns)
	done := make(chan int64, 2)
	for _, c := range []*usecase.HostnameChecker{c1, c2} {
		go func() { n, _ := c.CheckOnce(context.Background()); done <- n }()
	}
	if n := <-done + <-done; n != 1 {
		t.Fatalf("%d activations, want exactly one", n)
	}
	sa, sb := domainOf(t, s, a, "aa", host)["status"], domainOf(t, s, b, "bb", host)["status"]
	if (sa == "active") == (sb == "active") {
		t.Fatalf("statuses %v and %v: exactly one must be active", sa, sb)
	}
}

func TestCheckerLoopActivatesAndDeleteReleasesHostnames(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	dns := apptest.StartDNS(t)
	acct, other := apptest.NewAccount(), apptest.NewAccount()
	s.SetPlan(acct, "flock", 1)
	s.SetPlan(other, "flock", 1)
	s.CreateApp(acct, map[string]any{"name": "loop"})
	d := s.Must(http.StatusCreated, acct, http.MethodPost, "/api/apps/loop/domains", map[string]any{"hostname": "loop.example.net"}).Map(t)
	dns.SetTXT("_tori-challenge.loop.example.net", d["verification"].(map[string]any)["value"].(string))

	checker := newChecker(s, dns)
	checker.Interval = 20 * time.Millisecond
	testinfra.Background(t, "hostname checker", func(ctx context.Context) error {
		return lifecycle.RunJob(ctx, s.Log, lifecycle.Job{Name: "check custom hostnames", Every: checker.Interval, Immediately: true, Run: checker.CheckOnce})
	})
	testinfra.Eventually(t, 5*time.Second, "the checker activating the hostname", func() bool {
		return domainOf(t, s, acct, "loop", "loop.example.net")["status"] == "active"
	})
	// Deleting the app releases its active hostname (and tells the edge).
	s.Must(http.StatusOK, acct, http.MethodDelete, "/api/apps/loop", nil)
	keys := s.OutboxKeys()
	if !slices.Contains(keys, "apps.domain.removed") {
		t.Fatalf("no removal event on app delete: %v", keys)
	}
	s.CreateApp(other, map[string]any{"name": "next"})
	s.Must(http.StatusCreated, other, http.MethodPost, "/api/apps/next/domains", map[string]any{"hostname": "loop.example.net"})
}
