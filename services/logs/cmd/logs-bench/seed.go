package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/store"
	"tori.dev/services/logs/internal/usecase"
)

const (
	seedChunk   = 100_000 // entries per COPY and transaction
	seedWorkers = 2       // COPYs at once; the machine has two cores
)

// seed writes n generated entries with COPY, then vacuums and analyzes the table as a
// table that has been live for a week would be.
func seed(ctx context.Context, db *scratch, st *store.Store, gen *generator, n int) error {
	var days []time.Time
	for h := 0; h < gen.hours; h += 24 {
		days = append(days, gen.t0.Add(time.Duration(h)*time.Hour))
	}
	days = append(days, gen.t0.Add(time.Duration(gen.hours)*time.Hour))
	if err := st.EnsurePartitions(ctx, days); err != nil {
		return err
	}

	start := time.Now()
	chunks := make(chan []logs.Entry, seedWorkers)
	errs := make(chan error, seedWorkers)
	var wg sync.WaitGroup
	for range seedWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range chunks {
				err := st.InTx(ctx, func(tx usecase.Tx) error {
					_, err := tx.CopyEntries(ctx, c)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
	for done := 0; done < n && err == nil; {
		size := min(seedChunk, n-done)
		c := make([]logs.Entry, size)
		for i := range c {
			c[i] = gen.next()
		}
		select {
		case chunks <- c:
			done += size
		case err = <-errs:
		}
		if done%1_000_000 == 0 {
			fmt.Printf("  seeded %d of %d\n", done, n)
		}
	}
	close(chunks)
	wg.Wait()
	select {
	case err = <-errs:
	default:
	}
	if err != nil {
		return err
	}
	copied := time.Since(start)
	if _, err := db.admin.Exec(ctx, `VACUUM ANALYZE logs.log_entries`); err != nil {
		return err
	}
	var size string
	if err := db.queryRow(ctx, `SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid)))
		FROM pg_inherits WHERE inhparent = 'logs.log_entries'::regclass`).Scan(&size); err != nil {
		return err
	}
	fmt.Printf("seed: %d entries across %d apps and %d days by COPY in %s (%.0f rows/s), vacuumed in %s more; table with index %s\n",
		n, len(gen.apps), len(days)-1, copied.Round(time.Second), float64(n)/copied.Seconds(),
		(time.Since(start) - copied).Round(time.Second), size)
	return nil
}
