package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/usecase"
)

// Two schedulers (each its own pool, as two replicas) race over the same database for 200
// due ticks, three passes at once each: every tick leaves exactly one run and one
// StartCronRun.
func TestSchedulersRacingFireEachTickOnce(t *testing.T) {
	e := newEnv(t, testPlan)
	ctx := context.Background()
	// The test-only override lets every-minute jobs past the plan's hourly minimum.
	creator := e.svc.Crons(store.New(e.pool), 1)
	const apps = 100
	for i := 0; i < apps; i++ {
		slug := fmt.Sprintf("svc%d", i)
		e.serviceWithLive(slug)
		for _, name := range []string{"a", "b"} {
			n, s, c := name, "* * * * *", "x"
			if _, err := creator.Create(ctx, e.account, slug, usecase.JobInput{Name: &n, Schedule: &s, Command: &c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	second, err := pgxpool.NewWithConfig(ctx, e.pool.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	replicas := []*usecase.Crons{
		creator,
		usecase.New(usecase.Deps{Store: store.New(second), Plans: plans{p: testPlan}, Now: e.clock.Now}).Crons(store.New(second), 1),
	}

	for minute := 1; minute <= 2; minute++ {
		e.clock.Set(time.Date(2026, 11, 22, 3, minute, 1, 0, time.UTC))
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for _, r := range replicas {
			for g := 0; g < 3; g++ {
				wg.Add(1)
				go func(r *usecase.Crons) {
					defer wg.Done()
					if _, err := r.FireDue(ctx); err != nil {
						errs <- err
					}
				}(r)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}

	var runs, ticks, starts, pending int
	err = e.pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (job_id, scheduled_for)),
		(SELECT count(*) FROM outbox WHERE routing_key = 'zone.local.cron_run'),
		count(*) FILTER (WHERE status = 'pending') FROM cron_runs`).Scan(&runs, &ticks, &starts, &pending)
	if err != nil {
		t.Fatal(err)
	}
	// Minute 1: each job's first tick runs. Minute 2: forbid, the first still pending →
	// overlap. 2 jobs × 100 apps × 2 ticks.
	if runs != 400 || ticks != 400 || starts != 200 || pending != 200 {
		t.Fatalf("runs %d, distinct ticks %d, StartCronRun %d, pending %d; want 400, 400, 200, 200", runs, ticks, starts, pending)
	}
	var overlaps int
	e.pool.QueryRow(ctx, `SELECT count(*) FROM cron_runs WHERE skip_reason = 'overlap' AND scheduled_for = '2026-11-22T03:02:00Z'`).Scan(&overlaps)
	if overlaps != 200 {
		t.Fatalf("overlaps at 03:02: %d, want 200", overlaps)
	}
}

// A job nothing fired for ten hours leaves its newest 200 ticks (the oldest saying earlier
// ones were skipped too), and a job keeps no more than 200 runs.
func TestLongOutageKeepsTheNewestRuns(t *testing.T) {
	e := newEnv(t, testPlan)
	ctx := context.Background()
	e.serviceWithLive("svc")
	creator := e.svc.Crons(store.New(e.pool), 1)
	n, s, c := "often", "* * * * *", "x"
	if _, err := creator.Create(ctx, e.account, "svc", usecase.JobInput{Name: &n, Schedule: &s, Command: &c}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(10*time.Hour + 30*time.Second)
	e.fireDue()
	var count int
	var oldest, message string
	row := func() {
		t.Helper()
		err := e.pool.QueryRow(ctx, `SELECT count(*) OVER (), to_char(scheduled_for AT TIME ZONE 'UTC', 'HH24:MI'), coalesce(message, '')
			FROM cron_runs ORDER BY scheduled_for LIMIT 1`).Scan(&count, &oldest, &message)
		if err != nil {
			t.Fatal(err)
		}
	}
	row()
	// 13:00 runs (30 s late); 09:41 … 12:59 are missed.
	if count != 200 || oldest != "09:41" || message == "" {
		t.Fatalf("after ten hours: %d runs from %s, message %q", count, oldest, message)
	}
	if runs := e.cronRuns("svc", "often"); runs[0]["status"] != "pending" || runs[1]["skipReason"] != "missed" {
		t.Fatalf("newest runs: %v %v", runs[0], runs[1])
	}
	e.clock.Advance(2 * time.Minute)
	e.fireDue()
	row()
	if count != 200 || oldest != "09:43" {
		t.Fatalf("after two more ticks: %d runs from %s", count, oldest)
	}
}
