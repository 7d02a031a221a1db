package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The log entries of issue 41's world, written by COPY into the logs service's own day
// partitions (services/logs/internal/store: log_entries_pYYYYMMDD, one per UTC day), as
// logs-bench seeds them. DDL runs as the role that owns the logs schema, so the service can
// drop what the seed made, as it drops its own days.

const (
	logRetentionDays = 30 // the longest plan's (flock's) and LOG_MAX_RETENTION_DAYS' default
	logCopyChunk     = 50_000
	logCopyWorkers   = 2 // the machine has two cores
	// logsAppRecent is how many entries the apps GET .../logs reads (measureAPI's and
	// measureRetention's) hold in their last day: busy apps, so a 500-entry page is full.
	logsAppRecent = 24_000
	// logPartitionLock serializes partition DDL with the service's (store/partitions.go).
	logPartitionLock = "tori.logs.partitions"
)

// logRow is one entry to COPY.
type logRow struct {
	ts      time.Time
	app     [16]byte
	deploy  [16]byte
	process string
	seq     int
}

func (r logRow) values() []any {
	return []any{r.ts, r.app, r.deploy, "stdout", fmt.Sprintf("GET /items/%d 200 %d.%dms scale-seed", r.seq, r.seq%40, r.seq%10), r.process}
}

var logCopyColumns = []string{"ts", "app_id", "deploy_id", "stream", "message", "process"}

// seedLogs writes cfg.logEntriesPerApp entries for each seeded app from index from on,
// spread over the retention window, and a busy last day for the app GET .../logs reads.
func seedLogs(ctx context.Context, w *scaleWorld, st *cpState, from int) (int, error) {
	apps := seededApps(w, from)
	now := time.Now().UTC()
	// Whole days inside the window, so no seeded day is one the service's upkeep drops.
	first := now.Add(-(logRetentionDays - 1) * 24 * time.Hour).Add(-12 * time.Hour)
	last := now.Add(-time.Minute)
	var days []time.Time
	for d := logDay(first); !d.After(last); d = d.AddDate(0, 0, 1) {
		days = append(days, d)
	}
	if err := ensureLogDays(ctx, st.db, days); err != nil {
		return 0, err
	}
	rows := make(chan []logRow, logCopyWorkers)
	var copied int
	err := copyLogRows(ctx, st.db, pgx.Identifier{"logs", "log_entries"}, rows, func() {
		defer close(rows)
		chunk := make([]logRow, 0, logCopyChunk)
		emit := func(r logRow) bool {
			chunk = append(chunk, r)
			copied++
			if len(chunk) == logCopyChunk {
				select {
				case rows <- chunk:
				case <-ctx.Done():
					return false
				}
				chunk = make([]logRow, 0, logCopyChunk)
			}
			return true
		}
		per := w.cfg.logEntriesPerApp
		// Day by day, so each chunk lands in one or two partitions.
		for d, day := range days {
			lo, hi := maxTime(day, first), minTime(day.Add(24*time.Hour), last)
			for _, i := range apps {
				a := w.apps[i]
				n := per / len(days)
				if d < per%len(days) {
					n++
				}
				busy := i == st.logsApp || i == st.retentionApp
				if busy && d == len(days)-1 {
					n += logsAppRecent
				}
				for k := range n {
					ts := lo.Add(time.Duration(rand.Int64N(int64(hi.Sub(lo)))))
					if busy && d == len(days)-1 && k >= n-logsAppRecent {
						ts = last.Add(-time.Duration(rand.Int64N(int64(23 * time.Hour))))
					}
					if !emit(logRowOf(a, ts, k)) {
						return
					}
				}
			}
		}
		if len(chunk) > 0 {
			select {
			case rows <- chunk:
			case <-ctx.Done():
			}
		}
	})
	if err != nil {
		return 0, err
	}
	// A table live for weeks has statistics; the service's plans depend on them.
	if _, err := st.db.Exec(ctx, `ANALYZE logs.log_entries`); err != nil {
		return 0, err
	}
	if _, err := st.db.Exec(ctx, `ANALYZE deploys.deploys; ANALYZE deploys.revision_plans; ANALYZE apps.apps`); err != nil {
		return 0, err
	}
	return copied, nil
}

// seedOldDays prepares retentionDrops days a round past retention for measureRetention, each one day's
// worth of the world's entries (a thirtieth of them), as tables not yet attached to
// log_entries: attached, the service's upkeep would drop them at once. measureRetention
// attaches one and lets the upkeep drop it. Returns how many entries it wrote.
func seedOldDays(ctx context.Context, w *scaleWorld, st *cpState) (int, error) {
	perDay := len(w.apps) * w.cfg.logEntriesPerApp / logRetentionDays
	apps := seededApps(w, 0)
	owner, err := logsOwner(ctx, st.db)
	if err != nil {
		return 0, err
	}
	total := 0
	for range w.cfg.rounds * retentionDrops {
		// Past the edge: the upkeep drops a day once day+24h is 30 days old.
		day := logDay(time.Now().UTC()).AddDate(0, 0, -(logRetentionDays + 2 + st.nextOld))
		st.nextOld++
		name := logPartitionName(day)
		ddl := fmt.Sprintf(`SET ROLE %s; CREATE TABLE logs.%s (LIKE logs.log_entries INCLUDING DEFAULTS INCLUDING CONSTRAINTS); RESET ROLE`,
			pgx.Identifier{owner}.Sanitize(), pgx.Identifier{name}.Sanitize())
		if _, err := st.db.Exec(ctx, ddl); err != nil {
			return total, fmt.Errorf("old day %s: %w", name, err)
		}
		rows := make(chan []logRow, logCopyWorkers)
		err := copyLogRows(ctx, st.db, pgx.Identifier{"logs", name}, rows, func() {
			defer close(rows)
			for done := 0; done < perDay; {
				chunk := make([]logRow, min(logCopyChunk, perDay-done))
				for k := range chunk {
					a := w.apps[apps[rand.IntN(len(apps))]]
					chunk[k] = logRowOf(a, day.Add(time.Duration(rand.Int64N(int64(24*time.Hour)))), done+k)
				}
				done += len(chunk)
				select {
				case rows <- chunk:
				case <-ctx.Done():
					return
				}
			}
		})
		if err != nil {
			return total, err
		}
		total += perDay
		// The partition's indexes and a constraint proving its range, so attaching it only
		// links what is there, as a day the service filled would be.
		idx := fmt.Sprintf(`SET ROLE %[1]s;
			CREATE INDEX ON logs.%[2]s (app_id, ts, id);
			CREATE INDEX ON logs.%[2]s (app_id, split_part(process, '.', 1), ts, id, process) WHERE process <> '';
			ALTER TABLE logs.%[2]s ADD CONSTRAINT %[3]s CHECK (ts >= '%[4]s' AND ts < '%[5]s');
			RESET ROLE`, pgx.Identifier{owner}.Sanitize(), pgx.Identifier{name}.Sanitize(), pgx.Identifier{name + "_range"}.Sanitize(),
			day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339))
		if _, err := st.db.Exec(ctx, idx); err != nil {
			return total, fmt.Errorf("old day %s: %w", name, err)
		}
		st.oldDays = append(st.oldDays, day)
	}
	return total, nil
}

func logRowOf(a scaleApp, ts time.Time, seq int) logRow {
	r := logRow{ts: ts, app: uuid.MustParse(a.ID), seq: seq}
	if live := a.liveDeploy(); live != "" {
		r.deploy = uuid.MustParse(live)
	}
	if a.Kind == "service" {
		r.process = "web.1"
	}
	return r
}

// copyLogRows runs produce and COPYs every chunk it sends to rows into table, logCopyWorkers
// at a time.
func copyLogRows(ctx context.Context, db *pgxpool.Pool, table pgx.Identifier, rows chan []logRow, produce func()) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for range logCopyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chunk := range rows {
				_, err := db.CopyFrom(ctx, table, logCopyColumns, pgx.CopyFromSlice(len(chunk), func(i int) ([]any, error) {
					return chunk[i].values(), nil
				}))
				if err != nil {
					cancel(fmt.Errorf("copy into %s: %w", table.Sanitize(), err))
					for range rows {
					}
					return
				}
			}
		}()
	}
	produce()
	wg.Wait()
	return context.Cause(ctx)
}

// ensureLogDays creates the day partitions the seed writes into, as the service would
// (its DDL lock, its schema's owner).
func ensureLogDays(ctx context.Context, db *pgxpool.Pool, days []time.Time) error {
	owner, err := logsOwner(ctx, db)
	if err != nil {
		return err
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, logPartitionLock); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SET LOCAL ROLE `+pgx.Identifier{owner}.Sanitize()); err != nil {
		return err
	}
	for _, d := range days {
		ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS logs.%s PARTITION OF logs.log_entries FOR VALUES FROM ('%s') TO ('%s')`,
			pgx.Identifier{logPartitionName(d)}.Sanitize(), d.Format(time.RFC3339), d.Add(24*time.Hour).Format(time.RFC3339))
		if _, err := tx.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("partition %s: %w", logPartitionName(d), err)
		}
	}
	return tx.Commit(ctx)
}

// logsOwner is the role that owns the logs service's schema (the service's own).
func logsOwner(ctx context.Context, db *pgxpool.Pool) (string, error) {
	var owner string
	err := db.QueryRow(ctx, `SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'logs'`).Scan(&owner)
	if err != nil {
		return "", fmt.Errorf("the logs schema's owner: %w", err)
	}
	return owner, nil
}

func logDay(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func logPartitionName(day time.Time) string { return "log_entries_p" + day.Format("20060102") }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
