package drains_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fast are sender timings that keep the tests short; the rules are the defaults'.
var fast = drains.SenderOptions{
	Lease: 2 * time.Second, Poll: 20 * time.Millisecond, Claim: 100 * time.Millisecond,
	Backlog: 10000, Batch: 1000, MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond,
}

// receiver is an HTTPS drain receiver: it checks each batch's signature and keeps the ids in
// the order received.
type receiver struct {
	srv    *httptest.Server
	secret atomic.Value
	fail   atomic.Int64 // answer 500 while positive, counting down
	down   atomic.Bool  // answer 500 always
	mu     sync.Mutex
	ids    []int64
	lines  []map[string]any
	bad    []string
	inside atomic.Int64 // requests in flight
	most   atomic.Int64 // the most ever in flight at once
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	n := r.inside.Add(1)
	defer r.inside.Add(-1)
	for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
	}
	body, _ := io.ReadAll(req.Body)
	time.Sleep(5 * time.Millisecond) // a receiver takes a moment: overlapping senders would show
	if r.down.Load() || r.fail.Add(-1) >= 0 {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	secret, _ := r.secret.Load().(string)
	if !drains.Verify(secret, body, req.Header.Get(drains.SignatureHeader)) {
		r.bad = append(r.bad, "bad signature")
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		r.bad = append(r.bad, "content type "+ct)
	}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			r.bad = append(r.bad, err.Error())
			continue
		}
		id, _ := strconv.ParseInt(l["id"].(string), 10, 64)
		r.ids = append(r.ids, id)
		r.lines = append(r.lines, l)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) guard() drains.Guard {
	pool := x509.NewCertPool()
	pool.AddCert(r.srv.Certificate())
	return drains.Guard{TestHost: r.srv.Listener.Addr().String(), TestCA: pool}
}

// received is how many lines arrived, how many distinct, and how many arrived after a line
// with a larger (later) id.
func (r *receiver) received() (all, distinct, outOfOrder int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[int64]bool{}
	var last int64
	for _, id := range r.ids {
		if !seen[id] {
			seen[id] = true
			if id < last {
				outOfOrder++
			}
			last = max(last, id)
		}
	}
	return len(r.ids), len(seen), outOfOrder
}

type fixture struct {
	db    *logstest.DB
	app   logs.App
	drain drains.Drain
}

func newFixture(t *testing.T, url string) *fixture {
	t.Helper()
	db := logstest.NewDB(t)
	app := logs.App{ID: uuid.NewString(), AccountID: "team-" + uuid.NewString()[:8], Slug: "shop"}
	db.SaveApp(t, app)
	d := drains.Drain{ID: uuid.NewString(), AppID: app.ID, AccountID: app.AccountID, URL: url, Kind: drains.KindHTTPS,
		Secret: "s3cret", CreatedAt: time.Now()}
	if strings.HasPrefix(url, "syslog") {
		d.Kind, d.Secret = drains.KindSyslog, ""
	}
	if err := db.Store.CreateDrain(context.Background(), d, 3, "songbird"); err != nil {
		t.Fatal(err)
	}
	return &fixture{db: db, app: app, drain: d}
}

// write stores n lines of the app as ingestion does (one transaction), process web.1.
func (f *fixture) write(t *testing.T, n int, tag string) {
	t.Helper()
	now := time.Now().UTC()
	es := make([]logs.Entry, n)
	for i := range es {
		es[i] = logs.Entry{AppID: f.app.ID, Stream: logs.StreamStdout, Timestamp: now.Add(time.Duration(i) * time.Microsecond),
			Message: fmt.Sprintf("%s line %d", tag, i), Process: "web.1"}
	}
	f.db.Seed(t, es)
}

func (f *fixture) drainNow(t *testing.T) drains.Drain {
	t.Helper()
	d, err := f.db.Store.DrainOf(context.Background(), f.app.ID, f.drain.ID)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func runSender(t *testing.T, f *fixture, dv drains.Deliverer, opts drains.SenderOptions, owner string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	s := drains.NewSender(f.db.Store, dv, opts, owner, quiet, time.Now)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A receiver answering 500 for a while, then 200, gets every line once the failures end, in
// order, each signed; the drain shows failing meanwhile and active again after.
func TestDeliveryRetriesUntilTheReceiverRecoversAndLosesNothing(t *testing.T) {
	r := newReceiver(t)
	f := newFixture(t, "https://"+r.srv.Listener.Addr().String()+"/ingest?token=abc")
	r.secret.Store(f.drain.Secret)
	r.down.Store(true)
	runSender(t, f, drains.Deliverer{Guard: r.guard()}, fast, "")

	f.write(t, 1500, "a")
	waitFor(t, "the drain shows failing", 10*time.Second, func() bool { return f.drainNow(t).Status == drains.StatusFailing })
	if d := f.drainNow(t); d.LastError == nil || !strings.Contains(*d.LastError, "500") {
		t.Fatalf("lastError %v", d.LastError)
	}
	f.write(t, 700, "b")
	r.down.Store(false)
	waitFor(t, "every line delivered", 15*time.Second, func() bool { _, d, _ := r.received(); return d == 2200 })
	all, distinct, outOfOrder := r.received()
	t.Logf("received %d lines, %d distinct, %d out of order", all, distinct, outOfOrder)
	if all != distinct || outOfOrder != 0 {
		t.Fatalf("%d lines for %d distinct, %d out of order", all, distinct, outOfOrder)
	}
	if len(r.bad) > 0 {
		t.Fatalf("bad batches: %v", r.bad[:min(3, len(r.bad))])
	}
	l := r.lines[0]
	if l["app"] != "shop" || l["process"] != "web.1" || l["stream"] != "stdout" || l["message"] != "a line 0" {
		t.Fatalf("first line %v", l)
	}
	waitFor(t, "the drain active again", 5*time.Second, func() bool {
		d := f.drainNow(t)
		return d.Status == drains.StatusActive && d.Delivered24h == 2200 && d.LastDeliveryAt != nil && d.LastError == nil
	})
}

// Two senders (two replicas) on one drain: one sends at a time, nothing is lost, and when the
// holder stops the other takes over.
func TestTwoSendersOneDrain(t *testing.T) {
	r := newReceiver(t)
	f := newFixture(t, "https://"+r.srv.Listener.Addr().String()+"/")
	r.secret.Store(f.drain.Secret)
	dv := drains.Deliverer{Guard: r.guard()}
	opts := fast
	opts.Batch = 50 // many batches, so overlapping senders would show
	stopA := runSender(t, f, dv, opts, "replica-a")
	stopB := runSender(t, f, dv, opts, "replica-b")
	for i := range 6 {
		f.write(t, 500, fmt.Sprintf("r%d", i))
		time.Sleep(50 * time.Millisecond)
	}
	waitFor(t, "3000 lines delivered", 20*time.Second, func() bool { _, d, _ := r.received(); return d == 3000 })
	if m := r.most.Load(); m != 1 {
		t.Fatalf("%d batches of the drain in flight at once, want 1", m)
	}
	var holder string
	if err := f.db.Pool.QueryRow(context.Background(), `SELECT lease_owner FROM drains WHERE id = $1`, f.drain.ID).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	// The holder stops (releasing its lease); the other takes over.
	if holder == "replica-a" {
		stopA()
	} else {
		stopB()
	}
	f.write(t, 500, "after")
	waitFor(t, "the other replica delivers", 10*time.Second, func() bool { _, d, _ := r.received(); return d == 3500 })
	all, distinct, outOfOrder := r.received()
	t.Logf("received %d lines, %d distinct (%d repeats), %d out of order, holder was %s", all, distinct, all-distinct, outOfOrder, holder)
	if all != distinct || outOfOrder != 0 || r.most.Load() != 1 {
		t.Fatalf("%d lines for %d distinct, %d out of order, %d in flight at most", all, distinct, outOfOrder, r.most.Load())
	}
}

// Past the backlog the oldest lines are dropped, counted in dropped24h, and a system line
// says so in the app's own log, where the drain itself then delivers it.
func TestOverflowIsCountedAndReported(t *testing.T) {
	r := newReceiver(t)
	f := newFixture(t, "https://"+r.srv.Listener.Addr().String()+"/")
	r.secret.Store(f.drain.Secret)
	r.down.Store(true)
	opts := fast
	opts.Backlog = 100
	runSender(t, f, drains.Deliverer{Guard: r.guard()}, opts, "")
	f.write(t, 300, "x")
	// 99 lines stay, with room for the notice: the backlog's 100.
	waitFor(t, "201 lines counted as dropped", 10*time.Second, func() bool {
		return f.drainNow(t).Dropped24h == 201
	})
	want := drains.DroppedMessage(f.drain.ID, 201)
	var n int
	if err := f.db.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM log_entries WHERE app_id = $1 AND stream = 'system' AND message = $2`, f.app.ID, want).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d system lines %q in the app's log, want 1", n, want)
	}
	// The notice fitted: nothing more was dropped while the receiver stayed down.
	time.Sleep(1500 * time.Millisecond)
	if d := f.drainNow(t); d.Dropped24h != 201 {
		t.Fatalf("dropped %d after the notice, want still 201", d.Dropped24h)
	}
	r.down.Store(false)
	// The newest 99 lines and the notice.
	waitFor(t, "the backlog delivered", 10*time.Second, func() bool { return f.drainNow(t).Delivered24h == 100 })
	r.mu.Lock()
	defer r.mu.Unlock()
	var sawSystem bool
	for _, l := range r.lines {
		if l["stream"] == "system" && strings.Contains(l["message"].(string), "dropped") {
			sawSystem = true
		}
	}
	if !sawSystem {
		t.Fatal("the drain did not deliver its own overflow line")
	}
}

// A syslog+tls drain: RFC 5424 messages framed by octet counting, over TLS to the receiver.
func TestSyslogFramingOverTLS(t *testing.T) {
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: srv.TLS.Certificates})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				var frames []string
				for {
					n, err := br.ReadString(' ')
					if err != nil {
						break
					}
					size, err := strconv.Atoi(strings.TrimSuffix(n, " "))
					if err != nil {
						frames = append(frames, "BAD LENGTH "+n)
						break
					}
					b := make([]byte, size)
					if _, err := io.ReadFull(br, b); err != nil {
						frames = append(frames, "SHORT")
						break
					}
					frames = append(frames, string(b))
				}
				got <- frames
			}()
		}
	}()
	f := newFixture(t, "syslog+tls://"+ln.Addr().String())
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	runSender(t, f, drains.Deliverer{Guard: drains.Guard{TestHost: ln.Addr().String(), TestCA: pool}}, fast, "")
	ts := time.Date(2026, 11, 29, 12, 0, 0, 123e6, time.UTC)
	f.db.Seed(t, []logs.Entry{
		{AppID: f.app.ID, Stream: logs.StreamStdout, Timestamp: ts, Message: "hello\nsecond line", Process: "web.1"},
		{AppID: f.app.ID, Stream: logs.StreamStderr, Timestamp: ts.Add(time.Millisecond), Message: "oops"},
	})
	var frames []string
	select {
	case frames = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no syslog connection")
	}
	if len(frames) != 2 {
		t.Fatalf("frames %q", frames)
	}
	re := []string{
		`<14>1 2026-11-29T12:00:00.123Z tori shop web.1 stdout [tori@0 id="`,
		`<11>1 2026-11-29T12:00:00.124Z tori shop - stderr [tori@0 id="`,
	}
	for i, fr := range frames {
		if !strings.HasPrefix(fr, re[i]) {
			t.Errorf("frame %d %q, want prefix %q", i, fr, re[i])
		}
	}
	if !strings.HasSuffix(frames[0], `"] hello`+"\nsecond line") || !strings.HasSuffix(frames[1], `"] oops`) {
		t.Errorf("messages %q", frames)
	}
	waitFor(t, "delivered counted", 5*time.Second, func() bool { return f.drainNow(t).Delivered24h == 2 })
}

// A deleted app's cleanup removes its drains with their backlogs.
func TestDeletedAppLosesItsDrains(t *testing.T) {
	f := newFixture(t, "https://collector.example.com/")
	f.write(t, 10, "x")
	f.db.MarkAppDeleted(t, f.app, time.Now())
	if _, err := f.db.Store.DeleteAppEntries(context.Background(), f.app.ID, 100); err != nil {
		t.Fatal(err)
	}
	var drainsLeft, backlog int
	if err := f.db.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM drains), (SELECT count(*) FROM drain_backlog)`).Scan(&drainsLeft, &backlog); err != nil {
		t.Fatal(err)
	}
	if drainsLeft != 0 || backlog != 0 {
		t.Fatalf("%d drains, %d backlog rows left", drainsLeft, backlog)
	}
}
