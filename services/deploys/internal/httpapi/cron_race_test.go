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
