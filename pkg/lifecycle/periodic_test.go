package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"tori.dev/pkg/logging"
)

// syncBuffer is a log sink the job's goroutine and the test may touch at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestAFailedRunIsLoggedWithItsTraceAndTheJobGoesOn(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	var sink syncBuffer
	log := logging.New("test", &sink)
	runs := make(chan int, 10)
	n := 0
	job := Job{Name: "sweep", Every: time.Millisecond, Immediately: true, Run: func(ctx context.Context) (int64, error) {
		n++
		runs <- n
		if n == 1 {
			return 0, errors.New("database away")
		}
		return 3, nil
	}}
	parent, cancel := context.WithCancel(context.Background())
	g, _ := New(parent)
	g.Every(log, job)
	for want := 1; want <= 3; want++ {
		select {
		case got := <-runs:
			if got != want {
				t.Fatalf("run %d reported as %d", want, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d never came: a failed run stopped the job", want)
		}
	}
	cancel()
	if err := g.Wait(); err != nil {
		t.Fatalf("Wait() = %v after cancel, want a clean stop", err)
	}

	var failed, done, stopped map[string]any
	for _, l := range sink.lines(t) {
		switch l["msg"] {
		case "periodic job failed":
			failed = l
		case "periodic job done":
			done = l
		case "periodic job stopped":
			stopped = l
		}
	}
	if failed == nil || failed["err"] != "database away" || failed["job"] != "sweep" {
		t.Fatalf("failure line = %v, want the job's name and error", failed)
	}
	if id, _ := failed["trace_id"].(string); len(id) != 32 {
		t.Fatalf("failure line has trace_id %q, want the run's trace id", failed["trace_id"])
	}
	if done == nil || done["count"] != float64(3) || done["trace_id"] == failed["trace_id"] {
		t.Fatalf("done line = %v, want count 3 and a trace of its own", done)
	}
	if stopped == nil {
		t.Fatal("no line says the job stopped")
	}
}

func TestAJobWithoutAnIntervalFailsTheGroup(t *testing.T) {
	g, _ := New(context.Background())
	g.Every(slog.Default(), Job{Name: "never", Run: func(context.Context) (int64, error) { return 0, nil }})
	if err := g.Wait(); err == nil || !strings.Contains(err.Error(), "no interval") {
		t.Fatalf("Wait() = %v, want the missing interval named", err)
	}
}

func TestIdleRoundsStayQuiet(t *testing.T) {
	var sink syncBuffer
	log := logging.New("test", &sink)
	runs := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunJob(ctx, log, Job{Name: "idle", Every: time.Millisecond, Run: func(context.Context) (int64, error) {
			runs <- struct{}{}
			return 0, nil
		}})
	}()
	for i := 0; i < 5; i++ {
		<-runs
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("RunJob() = %v", err)
	}
	for _, l := range sink.lines(t) {
		if l["msg"] == "periodic job done" {
			t.Fatalf("an idle round logged %v", l)
		}
	}
}
