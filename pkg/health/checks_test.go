package health

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// readyz asks app's /readyz and returns the status and the names it waits for.
func readyz(t *testing.T, app *fiber.App) (int, []string) {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest("GET", "/readyz", nil), 5000)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	var body struct {
		Waiting []string `json:"waiting"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return resp.StatusCode, body.Waiting
}

// A dependency that stops answering turns /readyz 503 naming it, and 200 again once it
// answers; /healthz stays 200 throughout.
func TestReadyzFollowsItsChecks(t *testing.T) {
	fresh := checkFresh
	checkFresh = 0
	t.Cleanup(func() { checkFresh = fresh })

	id := NewIdentity("unit", "test")
	var dbDown, brokerDown atomic.Bool
	id.Check("database", func(context.Context) error {
		if dbDown.Load() {
			return errors.New("connection refused")
		}
		return nil
	})
	id.Check("broker", func(context.Context) error {
		if brokerDown.Load() {
			return errors.New("not connected")
		}
		return nil
	})
	app := fiber.New()
	app.Get("/healthz", id.Handler)
	app.Get("/readyz", id.ReadyHandler)

	for _, step := range []struct {
		db, broker bool // down
		status     int
		waiting    []string
	}{
		{false, false, 200, nil},
		{true, false, 503, []string{"database"}},
		{true, true, 503, []string{"broker", "database"}},
		{false, true, 503, []string{"broker"}},
		{false, false, 200, nil},
	} {
		dbDown.Store(step.db)
		brokerDown.Store(step.broker)
		status, waiting := readyz(t, app)
		if status != step.status || len(waiting) != len(step.waiting) {
			t.Fatalf("db down %v, broker down %v: %d %v; want %d %v", step.db, step.broker, status, waiting, step.status, step.waiting)
		}
		for i := range waiting {
			if waiting[i] != step.waiting[i] {
				t.Fatalf("db down %v, broker down %v: waiting %v; want %v", step.db, step.broker, waiting, step.waiting)
			}
		}
		resp, _ := app.Test(httptest.NewRequest("GET", "/healthz", nil))
		if resp.StatusCode != 200 {
			t.Fatalf("/healthz with db down %v, broker down %v: %d", step.db, step.broker, resp.StatusCode)
		}
	}
}

// Awaited parts come first: checks are asked only once the process has started.
func TestChecksWaitForAwaitedParts(t *testing.T) {
	id := NewIdentity("unit", "test")
	var asked atomic.Int32
	id.Check("database", func(context.Context) error { asked.Add(1); return nil })
	done := id.Await("queue")
	app := fiber.New()
	app.Get("/readyz", id.ReadyHandler)
	if status, waiting := readyz(t, app); status != 503 || len(waiting) != 1 || waiting[0] != "queue" || asked.Load() != 0 {
		t.Fatalf("before: %d %v, asked %d", status, waiting, asked.Load())
	}
	done()
	if status, _ := readyz(t, app); status != 200 || asked.Load() != 1 {
		t.Fatalf("after: %d, asked %d", status, asked.Load())
	}
}

// A probe that hangs, ignoring its context, counts as down once the deadline passes, so
// /readyz still answers.
func TestAHangingProbeCountsAsDown(t *testing.T) {
	timeout := checkTimeout
	checkTimeout = 50 * time.Millisecond
	t.Cleanup(func() { checkTimeout = timeout })

	id := NewIdentity("unit", "test")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	id.Check("database", func(context.Context) error { <-release; return nil })
	if failing := id.Failing(context.Background()); len(failing) != 1 || failing[0] != "database" {
		t.Fatalf("failing %v", failing)
	}
}

// Answers are reused for checkFresh: a burst of /readyz asks the database once.
func TestOneRoundAnswersABurst(t *testing.T) {
	id := NewIdentity("unit", "test")
	var asked atomic.Int32
	id.Check("database", func(context.Context) error { asked.Add(1); return nil })
	for range 20 {
		id.Failing(context.Background())
	}
	if asked.Load() != 1 {
		t.Fatalf("asked %d times in a burst", asked.Load())
	}
}
