package usecase_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/usecase"
)

// The checker against the service's real Postgres and a DNS server of the test's own, with a
// clock the test moves by hours and days.

const day = 24 * time.Hour

// clock is a time the test sets; the checker reads it from several goroutines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// countingResolver counts the look-ups of each name.
type countingResolver struct {
	usecase.Resolver
	mu    sync.Mutex
	asked map[string]int
}

func (r *countingResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	r.mu.Lock()
	r.asked[name]++
	r.mu.Unlock()
	return r.Resolver.LookupTXT(ctx, name)
}

func (r *countingResolver) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked[name]
}

type fixture struct {
	t       *testing.T
	s       *apptest.Service
	dns     *apptest.DNS
	clock   *clock
	lookups *countingResolver
	checker *usecase.HostnameChecker
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := apptest.New(t, apptest.Options{})
	dns := apptest.StartDNS(t)
	f := &fixture{t: t, s: s, dns: dns, clock: &clock{t: time.Now().UTC()}}
	// Claims are made on the same clock the checker reads.
	s.Services.Domains.Now = f.clock.Now
	f.lookups = &countingResolver{Resolver: dns.Resolver(), asked: map[string]int{}}
	f.checker = &usecase.HostnameChecker{
		Store: s.Store, Resolver: f.lookups, Interval: time.Minute, Log: s.Log, Now: f.clock.Now, Batch: 100,
		Policy: domains.Policy{
			PendingTTL: 7 * day, PendingEvery: time.Minute, ActiveEvery: day, MissingEvery: time.Hour, Grace: 72 * time.Hour,
		},
		Parallel: 4, LookupTimeout: 5 * time.Second,
	}
	return f
}

// round moves the clock on by d and runs one round.
func (f *fixture) round(d time.Duration) {
	f.t.Helper()
	f.clock.Add(d)
	if _, err := f.checker.CheckOnce(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// claim makes an account on songbird with a static app and claims host for it.
func (f *fixture) claim(slug, host string) (account, value string) {
	f.t.Helper()
	account = apptest.NewAccount()
	f.s.SetPlan(account, "songbird", 1)
	f.s.CreateApp(account, map[string]any{"name": slug})
	d := f.s.Must(http.StatusCreated, account, http.MethodPost, "/api/apps/"+slug+"/domains", map[string]any{"hostname": host}).Map(f.t)
	return account, d["verification"].(map[string]any)["value"].(string)
}

// activate claims host and proves it.
func (f *fixture) activate(slug, host string) (account, value string) {
	f.t.Helper()
	account, value = f.claim(slug, host)
	f.dns.SetTXT("_tori-challenge."+host, value)
	f.round(time.Minute)
	if st := f.status(account, slug, host); st != "active" {
		f.t.Fatalf("%s is %q after its record was published", host, st)
	}
	return account, value
}

// status is the hostname's status in the app's list, "" when it is not listed.
func (f *fixture) status(account, slug, host string) string {
	f.t.Helper()
	var list []map[string]any
	f.s.Must(http.StatusOK, account, http.MethodGet, "/api/apps/"+slug+"/domains", nil).JSON(f.t, &list)
	for _, d := range list {
		if d["hostname"] == host {
			return d["status"].(string)
		}
	}
	return ""
}

// events decodes the outbox's events of key, oldest first.
func events[M any, P interface {
	*M
	proto.Message
}](f *fixture, key string) []P {
	f.t.Helper()
	rows, err := f.s.Pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, key)
	if err != nil {
		f.t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		f.t.Fatal(err)
	}
	var out []P
	for _, b := range bodies {
		m := P(new(M))
		if err := proto.Unmarshal(b, m); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestPendingClaimExpiresAfterSevenDays(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const host = "late.example.com"
	acct, _ := f.claim("late", host)
	f.round(7*day - time.Hour)
	if st := f.status(acct, "late", host); st != "pending" {
		t.Fatalf("a claim short of 7 days is %q", st)
	}
	f.round(time.Hour)
	if st := f.status(acct, "late", host); st != "" {
		t.Fatalf("a claim pending 7 days is still listed as %q", st)
	}
	if n := len(f.s.OutboxKeys()); slices.ContainsFunc(f.s.OutboxKeys(), func(k string) bool { return k != "apps.app.created" }) {
		t.Fatalf("an expired claim was never served, so it publishes nothing: %d events %v", n, f.s.OutboxKeys())
	}
	// The hostname is free again: the app may claim it anew, with a fresh 7 days.
	f.s.Must(http.StatusCreated, acct, http.MethodPost, "/api/apps/late/domains", map[string]any{"hostname": host})
	f.round(6 * day)
	if st := f.status(acct, "late", host); st != "pending" {
		t.Fatalf("the new claim is %q after 6 days", st)
	}
}

func TestActiveHostnameIsReverifiedDaily(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const host = "daily.example.com"
	const record = "_tori-challenge." + host
	acct, _ := f.activate("daily", host)
	asked := f.lookups.count(record)
	// Rounds within the day leave an active hostname alone.
	for range 23 {
		f.round(time.Hour)
	}
	if got := f.lookups.count(record); got != asked {
		t.Fatalf("looked up %d times within a day of its verification", got-asked)
	}
	f.round(time.Hour)
	if got := f.lookups.count(record); got != asked+1 {
		t.Fatalf("%d look-ups a day after verification, want 1", got-asked)
	}
	if st := f.status(acct, "daily", host); st != "active" {
		t.Fatalf("re-verified hostname is %q", st)
	}
	// An active hostname past 7 days never expires: the TTL is for pending claims only.
	for range 8 {
		f.round(day)
	}
	if st := f.status(acct, "daily", host); st != "active" {
		t.Fatalf("active hostname after 9 days is %q", st)
	}
	if got := f.lookups.count(record); got != asked+9 {
		t.Fatalf("%d look-ups in 9 days, want 9", got-asked)
	}
}

func TestMissingRecordMailsOnceAndUnservesAfter72Hours(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const host = "gone.example.com"
	acct, value := f.activate("gone", host)
	f.dns.RemoveTXT("_tori-challenge." + host)

	f.round(day) // the daily re-check finds it missing
	missingAt := f.clock.Now()
	failing := events[appsv1.DomainVerificationFailing](f, appsbus.KeyDomainVerificationFailing)
	if len(failing) != 1 {
		t.Fatalf("%d verification_failing events, want 1", len(failing))
	}
	ev := failing[0]
	if ev.GetAccountId() != acct || ev.GetHostname() != host || ev.GetSlug() != "gone" || ev.GetRecordName() != "_tori-challenge."+host ||
		ev.GetRecordValue() != value || !ev.GetDeactivateAt().AsTime().Equal(ev.GetMissingSince().AsTime().Add(72*time.Hour)) {
		t.Fatalf("verification_failing %v", ev)
	}
	// Missing for less than 72 hours: still active, still served, and no second mail.
	for range 71 {
		f.round(time.Hour)
	}
	if st := f.status(acct, "gone", host); st != "active" {
		t.Fatalf("after 71 h missing: %q", st)
	}
	if n := len(events[appsv1.DomainVerificationFailing](f, appsbus.KeyDomainVerificationFailing)); n != 1 {
		t.Fatalf("%d verification_failing events while missing, want the first only", n)
	}
	if n := len(events[appsv1.DomainDeactivated](f, appsbus.KeyDomainDeactivated)); n != 0 {
		t.Fatal("deactivated before 72 h")
	}
	f.round(missingAt.Add(72 * time.Hour).Sub(f.clock.Now())) // exactly 72 h
	if st := f.status(acct, "gone", host); st != "pending" {
		t.Fatalf("after 72 h missing: %q, want pending", st)
	}
	deact := events[appsv1.DomainDeactivated](f, appsbus.KeyDomainDeactivated)
	if len(deact) != 1 || deact[0].GetHostname() != host || deact[0].GetAccountId() != acct || deact[0].GetAppId() == "" {
		t.Fatalf("deactivated events %v", deact)
	}
	if k := f.s.OutboxKeys(); k[len(k)-1] != appsbus.KeyDomainDeactivated {
		t.Fatalf("outbox %v", k)
	}
	// Pending again, with a fresh 7 days: the record put back makes it active and served again.
	f.dns.SetTXT("_tori-challenge."+host, value)
	f.round(time.Minute)
	if st := f.status(acct, "gone", host); st != "active" {
		t.Fatalf("record back on a deactivated hostname: %q", st)
	}
	if n := len(events[appsv1.DomainActivated](f, appsbus.KeyDomainActivated)); n != 2 {
		t.Fatalf("%d activated events, want 2", n)
	}
}

func TestRecordBackClearsTheMiss(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const host = "flaky.example.com"
	acct, value := f.activate("flaky", host)
	f.dns.RemoveTXT("_tori-challenge." + host)
	f.round(day)
	f.round(48 * time.Hour) // missing 48 h
	f.dns.SetTXT("_tori-challenge."+host, value)
	f.round(time.Hour) // back: the miss clears
	f.dns.RemoveTXT("_tori-challenge." + host)
	// Gone again: a new miss, a new mail, and a new 72 hours counted from now.
	f.round(day)
	if n := len(events[appsv1.DomainVerificationFailing](f, appsbus.KeyDomainVerificationFailing)); n != 2 {
		t.Fatalf("%d verification_failing events, want one per miss", n)
	}
	f.round(71 * time.Hour)
	if st := f.status(acct, "flaky", host); st != "active" {
		t.Fatalf("the first miss's hours were counted again: %q", st)
	}
	f.round(time.Hour)
	if st := f.status(acct, "flaky", host); st != "pending" {
		t.Fatalf("72 h into the second miss: %q", st)
	}
}

// barrierResolver holds each look-up until limit of them are in flight at once, and records
// the most ever in flight: a checker looking up one at a time never fills the barrier (its
// look-ups time out and nothing activates), and one without a bound exceeds it.
type barrierResolver struct {
	usecase.Resolver
	limit    int
	mu       sync.Mutex
	inFlight int
	most     int
	full     chan struct{}
}

func (r *barrierResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	r.mu.Lock()
	r.inFlight++
	r.most = max(r.most, r.inFlight)
	if r.inFlight == r.limit && r.full != nil {
		close(r.full)
		r.full = nil
	}
	full := r.full
	r.mu.Unlock()
	defer func() { r.mu.Lock(); r.inFlight--; r.mu.Unlock() }()
	if full != nil {
		select {
		case <-full:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return r.Resolver.LookupTXT(ctx, name)
}

func TestChecksRunInParallelWithABound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const limit = 3
	var hosts []string
	acct := apptest.NewAccount()
	f.s.SetPlan(acct, "flock", 1)
	f.s.CreateApp(acct, map[string]any{"name": "many"})
	for i := range 4 * limit {
		host := "h" + string(rune('a'+i)) + ".example.com"
		d := f.s.Must(http.StatusCreated, acct, http.MethodPost, "/api/apps/many/domains", map[string]any{"hostname": host}).Map(t)
		f.dns.SetTXT("_tori-challenge."+host, d["verification"].(map[string]any)["value"].(string))
		hosts = append(hosts, host)
	}
	r := &barrierResolver{Resolver: f.dns.Resolver(), limit: limit, full: make(chan struct{})}
	f.checker.Resolver, f.checker.Parallel, f.checker.LookupTimeout = r, limit, 5*time.Second
	f.clock.Add(time.Minute)
	n, err := f.checker.CheckOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(hosts)) {
		t.Fatalf("%d of %d activated", n, len(hosts))
	}
	if r.most != limit {
		t.Fatalf("at most %d look-ups were in flight at once, want exactly the bound %d", r.most, limit)
	}
}

// hangingResolver never answers for one name, as a dead DNS server would.
type hangingResolver struct {
	usecase.Resolver
	hang string
}

func (r hangingResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	if name == r.hang {
		<-ctx.Done()
		return nil, &net.DNSError{Err: "i/o timeout", Name: name, IsTimeout: true}
	}
	return r.Resolver.LookupTXT(ctx, name)
}

// Each look-up has its own timeout: a hung one ends the round neither early nor late for the
// others, and says nothing about the record, so an active hostname starts no miss.
func TestAHungLookUpTimesOutAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	acct, _ := f.activate("hung", "hung.example.com")
	_, v := f.claim("fine", "fine.example.com")
	f.dns.SetTXT("_tori-challenge.fine.example.com", v)
	f.dns.RemoveTXT("_tori-challenge.hung.example.com")
	f.checker.Resolver = hangingResolver{Resolver: f.dns.Resolver(), hang: "_tori-challenge.hung.example.com"}
	f.checker.LookupTimeout = 200 * time.Millisecond
	f.clock.Add(day)
	n, err := f.checker.CheckOnce(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("round with a hung look-up: %d activated, %v", n, err)
	}
	if st := f.status(acct, "hung", "hung.example.com"); st != "active" {
		t.Fatalf("hung look-up changed the hostname to %q", st)
	}
	if n := len(events[appsv1.DomainVerificationFailing](f, appsbus.KeyDomainVerificationFailing)); n != 0 {
		t.Fatal("a timed-out look-up mailed the owner")
	}
}
