package lifecycle_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/logging"
	"tori.dev/pkg/testinfra"
)

func TestAFailedRunIsLoggedWithItsTraceAndTheJobGoesOn(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	sink := &testinfra.LogBuffer{}
	log := logging.New("test", sink)
	runs := make(chan int, 10)
	n := 0
	job := lifecycle.Job{Name: "sweep", Every: time.Millisecond, Immediately: true, Run: func(ctx context.Context) (int64, error) {
		n++
		runs <- n
		if n == 1 {
			return 0, errors.New("database away")
		}
		return 3, nil
	}}
	parent, cancel := context.WithCancel(context.Background())
	g, _ := lifecycle.New(parent)
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
	for _, l := range sink.Lines(t) {
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
	g, _ := lifecycle.New(context.Background())
	g.Every(slog.Default(), lifecycle.Job{Name: "never", Run: func(context.Context) (int64, error) { return 0, nil }})
	if err := g.Wait(); err == nil || !strings.Contains(err.Error(), "no interval") {
		t.Fatalf("Wait() = %v, want the missing interval named", err)
	}
}

func TestIdleRoundsStayQuiet(t *testing.T) {
	sink := &testinfra.LogBuffer{}
	log := logging.New("test", sink)
	runs := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- lifecycle.RunJob(ctx, log, lifecycle.Job{Name: "idle", Every: time.Millisecond, Run: func(context.Context) (int64, error) {
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
	for _, l := range sink.Lines(t) {
		if l["msg"] == "periodic job done" {
			t.Fatalf("an idle round logged %v", l)
		}
	}
}
