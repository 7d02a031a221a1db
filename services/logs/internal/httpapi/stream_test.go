package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

// streamEnv is the service on a real listener (app.Test would buffer the stream), on the
// real clock, with limits a test can wait out.
type streamEnv struct {
	db   *logstest.DB
	url  string
	stop context.CancelFunc
}

func newStreamEnv(t *testing.T, limits httpapi.StreamLimits) *streamEnv {
	t.Helper()
	db := logstest.NewDB(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	plans := usecase.NewPlans(db.Store, busapi.BillingPlans{Client: billingbus.PlanClient{Bus: fakeBilling{}, Timeout: time.Second}}, quiet)
	stopping, stop := context.WithCancel(context.Background())
	web := httpapi.New(httpapi.Deps{
		Reader:     usecase.NewReader(db.Store, db.Store, plans, time.Now),
		Streamer:   usecase.NewStreamer(db.Store, plans, db.Store, time.Now, 2*time.Second),
		Stream:     limits,
		Stopping:   stopping,
		SigningKey: signingKey,
		Apps:       usecase.NewAppFinder(db.Store, nil, quiet),
		DB:         db.Pool,
		Identity:   health.NewIdentity("logs", "test"),
		Log:        quiet,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = web.Listener(ln) }()
	t.Cleanup(func() { stop(); _ = web.ShutdownWithTimeout(5 * time.Second) })
	return &streamEnv{db: db, url: "http://" + ln.Addr().String(), stop: stop}
}

// sseEvent is one parsed event; comment lines are counted as heartbeats.
type sseEvent struct {
	ID, Event, Data string
}

type sseReader struct {
	body       io.ReadCloser
	sc         *bufio.Scanner
	heartbeats int
}

func (e *streamEnv) open(t *testing.T, account, slug, query, lastEventID string) (*http.Response, *sseReader) {
	t.Helper()
	target := "/api/apps/" + slug + "/logs/stream"
	if query != "" {
		target += "?" + query
	}
	req, err := http.NewRequest("GET", e.url+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	caller := callerid.Caller{AccountID: account, UserID: "user-" + account, TokenKind: callerid.KindSession, TokenID: "tok"}
	callerid.Sign(signingKey, req.Header.Set, caller, "GET", req.URL.Host, target, time.Now())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res, &sseReader{body: res.Body, sc: bufio.NewScanner(res.Body)}
}

// next reads the next event (not a comment or a bare retry), failing after d.
func (r *sseReader) next(t *testing.T, d time.Duration) sseEvent {
	t.Helper()
	got := make(chan sseEvent, 1)
	fail := make(chan error, 1)
	go func() {
		var ev sseEvent
		for r.sc.Scan() {
			line := r.sc.Text()
			switch {
			case line == "":
				if ev.Data != "" {
					got <- ev
					return
				}
			case strings.HasPrefix(line, ":"):
				r.heartbeats++
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.Data = line[6:]
			}
		}
		fail <- fmt.Errorf("stream ended: %v", r.sc.Err())
	}()
	select {
	case ev := <-got:
		return ev
	case err := <-fail:
		t.Fatal(err)
	case <-time.After(d):
		r.body.Close()
		t.Fatalf("no event within %s", d)
	}
	return sseEvent{}
}

type streamedEntry struct {
	ID, Timestamp, Stream, Message string
	DeployID                       *string
	Process                        *string
}

func entryOf(t *testing.T, ev sseEvent) streamedEntry {
	t.Helper()
	if ev.Event != "" {
		t.Fatalf("event %q (%s), want an entry", ev.Event, ev.Data)
	}
	var e streamedEntry
	if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
		t.Fatalf("entry data %q: %v", ev.Data, err)
	}
	return e
}

func closeReason(t *testing.T, ev sseEvent) string {
	t.Helper()
	if ev.Event != "close" {
		t.Fatalf("event %q (%s), want close", ev.Event, ev.Data)
	}
	var c struct{ Reason, Message string }
	if err := json.Unmarshal([]byte(ev.Data), &c); err != nil || c.Message == "" {
		t.Fatalf("close data %q: %v", ev.Data, err)
	}
	return c.Reason
}

func line(a logs.App, ts time.Time, msg string) logs.Entry {
	return logs.Entry{AppID: a.ID, Stream: logs.StreamStdout, Timestamp: ts, Message: msg}
}

func TestStreamDeliversNewLinesOnceIncludingLateOnes(t *testing.T) {
	e := newStreamEnv(t, httpapi.StreamLimits{Poll: 50 * time.Millisecond})
	e.db.SavePlan(t, "acc", 7)
	a := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "web"}
	e.db.SaveApp(t, a)
	e.db.Seed(t, []logs.Entry{line(a, time.Now().Add(-time.Hour), "before the stream")})

	res, r := e.open(t, "acc", "web", "", "")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	time.Sleep(400 * time.Millisecond) // room after the stream's start for the late line
	now := time.Now()
	e.db.Seed(t, []logs.Entry{line(a, now, "one"), line(a, now, "two")})
	e.db.Seed(t, []logs.Entry{line(a, now.Add(time.Millisecond), "three")})
	var got []string
	for range 3 {
		got = append(got, entryOf(t, r.next(t, 5*time.Second)).Message)
	}
	// Committed after newer lines were sent, stamped before them (a slower zone batch).
	e.db.Seed(t, []logs.Entry{line(a, now.Add(-200*time.Millisecond), "late")})
	got = append(got, entryOf(t, r.next(t, 5*time.Second)).Message)
	e.db.Seed(t, []logs.Entry{line(a, now.Add(2*time.Millisecond), "four")})
	got = append(got, entryOf(t, r.next(t, 5*time.Second)).Message)
	want := "one two three late four"
	if strings.Join(got, " ") != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestStreamResumesFromLastEventIDWithoutGapsOrRepeats(t *testing.T) {
	e := newStreamEnv(t, httpapi.StreamLimits{Poll: 50 * time.Millisecond})
	e.db.SavePlan(t, "acc", 7)
	a := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "web"}
	e.db.SaveApp(t, a)
	start := time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)
	// 1,200 lines sharing one timestamp: more than one poll's batch, so paging is exercised.
	seed := make([]logs.Entry, 1200)
	for i := range seed {
		seed[i] = line(a, start, fmt.Sprintf("l%04d", i))
	}
	e.db.Seed(t, seed)

	_, r := e.open(t, "acc", "web", "start="+rfc(start), "")
	var last string
	for i := range 700 {
		ev := r.next(t, 5*time.Second)
		if m := entryOf(t, ev).Message; m != fmt.Sprintf("l%04d", i) {
			t.Fatalf("entry %d is %q", i, m)
		}
		last = ev.ID
	}
	r.body.Close()

	_, r2 := e.open(t, "acc", "web", "start="+rfc(start), last)
	for i := 700; i < 1200; i++ {
		if m := entryOf(t, r2.next(t, 5*time.Second)).Message; m != fmt.Sprintf("l%04d", i) {
			t.Fatalf("after resuming, entry %d is %q", i, m)
		}
	}
	e.db.Seed(t, []logs.Entry{line(a, time.Now(), "new")})
	if m := entryOf(t, r2.next(t, 5*time.Second)).Message; m != "new" {
		t.Fatalf("next after the backlog is %q, want new", m)
	}
}

func TestStreamChecksOwnerAndParameters(t *testing.T) {
	e := newStreamEnv(t, httpapi.StreamLimits{})
	e.db.SavePlan(t, "acc", 7)
	e.db.SavePlan(t, "other", 7)
	a := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "web"}
	e.db.SaveApp(t, a)
	for _, tt := range []struct {
		account, query, lastID string
		status                 int
	}{
		{"other", "", "", 404},
		{"acc", "start=yesterday", "", 400},
		{"acc", "", "not-an-id", 400},
		{"acc", "start=" + rfc(time.Now().Add(-8*24*time.Hour)), "", 410},
	} {
		res, _ := e.open(t, tt.account, "web", tt.query, tt.lastID)
		if res.StatusCode != tt.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %q %q: status %d (%s), want %d JSON", tt.account, tt.query, tt.lastID, res.StatusCode, res.Header.Get("Content-Type"), tt.status)
		}
	}
}

func TestStreamClosesWithReason(t *testing.T) {
	tests := []struct {
		name   string
		limits httpapi.StreamLimits
		act    func(t *testing.T, e *streamEnv, a logs.App)
		want   string
	}{
		{"app deleted", httpapi.StreamLimits{Poll: 50 * time.Millisecond, LivenessEvery: 100 * time.Millisecond},
			func(t *testing.T, e *streamEnv, a logs.App) { e.db.MarkAppDeleted(t, a, time.Now()) }, "app_deleted"},
		{"shutdown", httpapi.StreamLimits{Poll: 50 * time.Millisecond}, func(_ *testing.T, e *streamEnv, _ logs.App) { e.stop() }, "shutdown"},
		{"idle", httpapi.StreamLimits{Poll: 50 * time.Millisecond, Idle: 300 * time.Millisecond}, func(*testing.T, *streamEnv, logs.App) {}, "idle_timeout"},
		{"lifetime", httpapi.StreamLimits{Poll: 50 * time.Millisecond, Lifetime: 300 * time.Millisecond}, func(*testing.T, *streamEnv, logs.App) {}, "lifetime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStreamEnv(t, tt.limits)
			e.db.SavePlan(t, "acc", 7)
			a := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "web"}
			e.db.SaveApp(t, a)
			_, r := e.open(t, "acc", "web", "", "")
			tt.act(t, e, a)
			if got := closeReason(t, r.next(t, 5*time.Second)); got != tt.want {
				t.Fatalf("reason %q, want %q", got, tt.want)
			}
			if r.sc.Scan() {
				t.Fatalf("more after the final event: %q", r.sc.Text())
			}
		})
	}
}

func TestStreamSendsHeartbeatsWhenQuiet(t *testing.T) {
	e := newStreamEnv(t, httpapi.StreamLimits{Poll: 20 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Lifetime: 700 * time.Millisecond})
	e.db.SavePlan(t, "acc", 7)
	e.db.SaveApp(t, logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "web"})
	_, r := e.open(t, "acc", "web", "", "")
	if got := closeReason(t, r.next(t, 5*time.Second)); got != "lifetime" {
		t.Fatalf("reason %q", got)
	}
	if r.heartbeats < 3 {
		t.Fatalf("%d heartbeats in 700 ms at one per 100 ms", r.heartbeats)
	}
}
