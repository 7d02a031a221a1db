package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/logs"
)

// Partitions are named after their UTC day, log_entries_pYYYYMMDD, and hold [day, day+24h).
const (
	partitionPrefix = "log_entries_p"
	partitionLayout = "20060102"
	// DDL on a partition briefly locks the whole table; waiting longer than this behind a
	// slow read is worse than failing and trying again (the caller retries).
	ddlLockTimeout = "10s"
	// Serializes partition DDL across copies of the service, whose IF NOT EXISTS would
	// otherwise race on the catalog.
	ddlLockKey = "tori.logs.partitions"
)

func partitionName(day time.Time) string {
	return partitionPrefix + day.Format(partitionLayout)
}

// partitionCache remembers partitions known to exist, so ingestion asks Postgres only on a
// new day.
type partitionCache struct {
	mu    sync.Mutex
	known map[string]bool
}

func (c *partitionCache) has(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.known[name]
}

func (c *partitionCache) set(name string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		c.known[name] = true
	} else {
		delete(c.known, name)
	}
}

func (c *partitionCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.known = map[string]bool{}
}

// EnsurePartitions creates the partitions of days that do not exist yet. It runs outside
// any ingest transaction: creating a partition locks the parent table, and doing that while
// holding the ingest lock could wait on readers for the length of their query.
func (s *Store) EnsurePartitions(ctx context.Context, days []time.Time) error {
	for _, d := range days {
		day := logs.Day(d)
		name := partitionName(day)
		if s.parts.has(name) {
			continue
		}
		if err := s.createPartition(ctx, day); err != nil {
			return err
		}
		s.parts.set(name, true)
	}
	return nil
}

func (s *Store) createPartition(ctx context.Context, day time.Time) error {
	name := partitionName(day)
	made, err := s.createPartitionOf(ctx, "log_entries", name, day)
	if err != nil {
		return fmt.Errorf("store: create partition %s: %w", name, err)
	}
	if made {
		s.warmReads(ctx)
	}
	return nil
}

// createPartitionOf gives parent the partition name for day, without ever holding a lock on
// parent that reads or writes wait for. CREATE TABLE ... PARTITION OF locks the parent
// ACCESS EXCLUSIVE: waiting behind one slow reader, it queued every read and every ingest
// of the table behind itself for up to the lock timeout. A table made alike and then
// attached needs only SHARE UPDATE EXCLUSIVE on the parent, which neither reads nor COPY
// conflict with; the attach builds the parent's indexes on the empty table at once.
//
// made tells whether this call attached the table (false: it was there already), so that
// only a real change of the parent's partitions pays for a warm-up.
func (s *Store) createPartitionOf(ctx context.Context, parent, name string, day time.Time) (made bool, err error) {
	var exists bool
	if err := s.ddl.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil {
		return false, fmt.Errorf("look up: %w", err)
	}
	if exists {
		return false, nil
	}
	table, of := pgx.Identifier{name}.Sanitize(), pgx.Identifier{parent}.Sanitize()
	// Bounds are literals (DDL takes no parameters), built from a time, never from input.
	attach := fmt.Sprintf(`ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')`,
		of, table, day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339))
	err = pgstore.InTx(ctx, s.ddl, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+ddlLockTimeout+`'`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, ddlLockKey); err != nil {
			return err
		}
		// Another copy of the service may have made it while this one waited for the lock.
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil || exists {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE `+table+` (LIKE `+of+` INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, attach); err != nil {
			return err
		}
		made = true
		return nil
	})
	return made && err == nil, err
}

// Partitions lists the days that have a partition, oldest first.
func (s *Store) Partitions(ctx context.Context) ([]time.Time, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'log_entries'::regclass`)
	if err != nil {
		return nil, fmt.Errorf("store: list partitions: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: list partitions: %w", err)
	}
	var days []time.Time
	for _, n := range names {
		day, err := time.Parse(partitionLayout, strings.TrimPrefix(n, partitionPrefix))
		if err != nil || !strings.HasPrefix(n, partitionPrefix) {
			continue // not one of ours; leave it alone
		}
		days = append(days, day)
	}
	sort.Slice(days, func(i, j int) bool { return days[i].Before(days[j]) })
	return days, nil
}

// DropPartition drops the partition of day with every entry in it.
func (s *Store) DropPartition(ctx context.Context, day time.Time) error {
	name := partitionName(logs.Day(day))
	s.parts.set(name, false)
	if err := s.detachAndDrop(ctx, "log_entries", name); err != nil {
		return fmt.Errorf("store: drop partition %s: %w", name, err)
	}
	s.warmReads(ctx)
	return nil
}

// detachAndDrop takes partition name out of parent and then drops it, without ever holding
// a lock on parent that reads or writes wait for. A DROP TABLE of an attached partition
// locks the parent ACCESS EXCLUSIVE: waiting behind one slow reader, it queued every read
// and every ingest of the table behind itself for up to the lock timeout. DETACH PARTITION
// CONCURRENTLY locks the parent only SHARE UPDATE EXCLUSIVE, which neither reads nor COPY
// conflict with, and waits for the transactions that may still see the partition; the DROP
// that follows locks the detached table alone, which no new query touches.
//
// CONCURRENTLY cannot run in a transaction, so the DDL lock is the session's, held on the
// DDL pool's one connection. A detach left half done (its second step timed out) is
// finished first: until then Postgres refuses to detach any other partition of parent.
func (s *Store) detachAndDrop(ctx context.Context, parent, name string) error {
	conn, err := s.ddl.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// Session settings and locks outlive the call: should undoing them fail, the connection
	// goes (and they with it) rather than back to the pool.
	undo := func(sql string, args ...any) {
		if _, err := conn.Exec(context.WithoutCancel(ctx), sql, args...); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}
	if _, err := conn.Exec(ctx, `SET lock_timeout = '`+ddlLockTimeout+`'`); err != nil {
		return err
	}
	defer undo(`RESET lock_timeout`)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, ddlLockKey); err != nil {
		return err
	}
	defer undo(`SELECT pg_advisory_unlock(hashtext($1))`, ddlLockKey)
	pending, err := detachPending(ctx, conn.Conn(), parent)
	if err != nil {
		return err
	}
	for _, p := range pending {
		if _, err := conn.Exec(ctx, `ALTER TABLE `+pgx.Identifier{parent}.Sanitize()+` DETACH PARTITION `+
			pgx.Identifier{p}.Sanitize()+` FINALIZE`); err != nil {
			return fmt.Errorf("finish detaching %s: %w", p, err)
		}
	}
	var attached bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_inherits
		WHERE inhparent = $1::regclass AND inhrelid = to_regclass($2))`, parent, name).Scan(&attached)
	if err != nil {
		return err
	}
	if attached {
		if _, err := conn.Exec(ctx, `ALTER TABLE `+pgx.Identifier{parent}.Sanitize()+` DETACH PARTITION `+
			pgx.Identifier{name}.Sanitize()+` CONCURRENTLY`); err != nil {
			return fmt.Errorf("detach: %w", err)
		}
	}
	_, err = conn.Exec(ctx, `DROP TABLE IF EXISTS `+pgx.Identifier{name}.Sanitize())
	return err
}

// detachPending lists parent's partitions whose concurrent detach did not finish.
func detachPending(ctx context.Context, conn *pgx.Conn, parent string) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = $1::regclass AND i.inhdetachpending`, parent)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ErrNoPartition means an entry's day had no partition (another copy of the service dropped
// it after this one cached it). The cache is cleared; the message's retry recreates it.
var ErrNoPartition = errors.New("store: no partition for an entry's day")
