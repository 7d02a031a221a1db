package httpapi_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/logs"
)

// ?process= on the window route: a dotted value is one process, a bare one a type (cron is
// every cron run); lines of no process show only unfiltered; a malformed value is 400, after
// the app's 404.
func TestLogsFilterByProcess(t *testing.T) {
	e := newEnv(t)
	app := e.newApp(t, "acc", "web")
	e.db.SavePlan(t, "acc", 7)
	t0 := testNow.Add(-10 * time.Minute)
	procs := []string{"", "web.1", "worker.1", "worker.2", "cron.nightly.019a", "workers.1", "cron.hourly.019b", "worker.2", ""}
	var seed []logs.Entry
	for i, p := range procs {
		seed = append(seed, logs.Entry{AppID: app.ID, Stream: logs.StreamStdout, Process: p, Timestamp: t0.Add(time.Duration(i) * time.Second), Message: "m"})
	}
	e.db.Seed(t, seed)

	read := func(t *testing.T, process string) []any {
		t.Helper()
		r := e.get(t, "acc", "web", url.Values{"process": {process}})
		if r.Status != 200 {
			t.Fatalf("process=%s: status %d: %s", process, r.Status, r.Raw)
		}
		var out []any
		for _, en := range r.Body["entries"].([]any) {
			out = append(out, en.(map[string]any)["process"])
		}
		return out
	}
	for _, tt := range []struct {
		process string
		want    []any
	}{
		{"", []any{nil, "web.1", "worker.1", "worker.2", "cron.nightly.019a", "workers.1", "cron.hourly.019b", "worker.2", nil}},
		{"worker.2", []any{"worker.2", "worker.2"}},
		{"worker", []any{"worker.1", "worker.2", "worker.2"}},
		{"cron", []any{"cron.nightly.019a", "cron.hourly.019b"}},
		{"cron.hourly.019b", []any{"cron.hourly.019b"}},
		{"clock", nil},
	} {
		if got := read(t, tt.process); !slices.Equal(got, tt.want) {
			t.Errorf("process=%q: %v, want %v", tt.process, got, tt.want)
		}
	}

	for _, bad := range []string{"Worker", "worker.", ".2", "worker.2.3.4", "1web", "web 1", "web_1", strings.Repeat("a", 31), "worker.*"} {
		r := e.get(t, "acc", "web", url.Values{"process": {bad}})
		if r.Status != 400 || r.Body["code"] != "invalid_parameter" || !strings.HasPrefix(r.Body["message"].(string), "process") {
			t.Errorf("process=%q: %d %s, want 400 invalid_parameter naming process", bad, r.Status, r.Raw)
		}
	}
	// Another account's app is 404 whatever the filter.
	if r := e.get(t, "other", "web", url.Values{"process": {"Bad!"}}); r.Status != 404 {
		t.Errorf("foreign app with a bad filter: %d, want 404", r.Status)
	}
}

// The live stream filters the same way, the backlog and new lines alike, and refuses a
// malformed filter before the stream starts.
func TestStreamFiltersByProcess(t *testing.T) {
	e := newStreamEnv(t, httpapi.StreamLimits{Poll: 50 * time.Millisecond})
	e.db.SavePlan(t, "acc", 7)
	a := logs.App{ID: uuid.NewString(), AccountID: "acc", Slug: "web"}
	e.db.SaveApp(t, a)
	start := time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)
	with := func(ts time.Time, p, msg string) logs.Entry {
		en := line(a, ts, msg)
		en.Process = p
		return en
	}
	e.db.Seed(t, []logs.Entry{with(start, "web.1", "web backlog"), with(start.Add(time.Millisecond), "worker.1", "worker backlog"),
		with(start.Add(2*time.Millisecond), "", "build backlog")})

	_, worker := e.open(t, "acc", "web", "process=worker&start="+rfc(start), "")
	_, cron := e.open(t, "acc", "web", "process=cron", "")
	_, one := e.open(t, "acc", "web", "process=worker.2", "")
	if m := entryOf(t, worker.next(t, 5*time.Second)).Message; m != "worker backlog" {
		t.Fatalf("worker stream's backlog starts with %q", m)
	}
	time.Sleep(300 * time.Millisecond) // the cron and worker.2 streams start at their open
	now := time.Now()
	e.db.Seed(t, []logs.Entry{with(now, "web.2", "web new"), with(now.Add(time.Millisecond), "worker.2", "worker.2 new"),
		with(now.Add(2*time.Millisecond), "cron.nightly.019c", "cron new"), with(now.Add(3*time.Millisecond), "worker.1", "worker.1 new")})

	var got []string
	for range 2 {
		got = append(got, entryOf(t, worker.next(t, 5*time.Second)).Message)
	}
	if want := []string{"worker.2 new", "worker.1 new"}; !slices.Equal(got, want) {
		t.Errorf("worker stream: %q, want %q", got, want)
	}
	ev := entryOf(t, cron.next(t, 5*time.Second))
	if ev.Message != "cron new" || ev.Process == nil || *ev.Process != "cron.nightly.019c" {
		t.Errorf("cron stream: %+v", ev)
	}
	if m := entryOf(t, one.next(t, 5*time.Second)).Message; m != "worker.2 new" {
		t.Errorf("worker.2 stream: %q", m)
	}
	// Nothing else comes on the one-process stream: the next line it sends is its own.
	e.db.Seed(t, []logs.Entry{with(time.Now(), "worker.1", "not for worker.2"), with(time.Now().Add(time.Millisecond), "worker.2", "worker.2 again")})
	if m := entryOf(t, one.next(t, 5*time.Second)).Message; m != "worker.2 again" {
		t.Errorf("worker.2 stream sent %q", m)
	}

	res, _ := e.open(t, "acc", "web", "process=worker.", "")
	if res.StatusCode != 400 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Errorf("malformed process: status %d (%s), want 400 JSON", res.StatusCode, res.Header.Get("Content-Type"))
	}
}
