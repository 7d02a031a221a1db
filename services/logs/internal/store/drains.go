package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/logs"
)

var _ drains.Store = (*Store)(nil)

// drainColumns are a drain's columns with its last 24 hours' counts.
const drainColumns = `
	d.id, d.app_id, d.account_id, d.url, d.kind, d.secret, d.status, d.created_at,
	d.last_delivery_at, d.last_error,
	COALESCE((SELECT sum(c.delivered) FROM drain_counts c WHERE c.drain_id = d.id AND c.hour > now() - interval '24 hours'), 0)::bigint,
	COALESCE((SELECT sum(c.dropped) FROM drain_counts c WHERE c.drain_id = d.id AND c.hour > now() - interval '24 hours'), 0)::bigint`

func scanDrain(row pgx.Row) (drains.Drain, error) {
	var (
		d          drains.Drain
		id, app    uuid.UUID
		kind, stat string
	)
	err := row.Scan(&id, &app, &d.AccountID, &d.URL, &kind, &d.Secret, &stat, &d.CreatedAt,
		&d.LastDeliveryAt, &d.LastError, &d.Delivered24h, &d.Dropped24h)
	if err != nil {
		return drains.Drain{}, err
	}
	d.ID, d.AppID, d.Kind, d.Status = id.String(), app.String(), drains.Kind(kind), drains.Status(stat)
	return d, nil
}

// CreateDrain implements drains.Store.
func (s *Store) CreateDrain(ctx context.Context, d drains.Drain, limit int, plan string) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// Two creates at once must not both see room for one more.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('tori.logs.drains:' || $1))`, d.AppID); err != nil {
			return fmt.Errorf("store: drain lock: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM drains WHERE app_id = $1`, d.AppID).Scan(&n); err != nil {
			return fmt.Errorf("store: count drains: %w", err)
		}
		if n >= limit {
			return &drains.LimitError{Limit: limit, Plan: plan}
		}
		_, err := tx.Exec(ctx, `INSERT INTO drains (id, app_id, account_id, url, kind, secret, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, d.ID, d.AppID, d.AccountID, d.URL, string(d.Kind), d.Secret, d.CreatedAt)
		if err != nil {
			return fmt.Errorf("store: create drain: %w", err)
		}
		return nil
	})
}

// Drains implements drains.Store.
func (s *Store) Drains(ctx context.Context, appID string) ([]drains.Drain, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+drainColumns+` FROM drains d WHERE d.app_id = $1 ORDER BY d.created_at, d.id`, appID)
	if err != nil {
		return nil, fmt.Errorf("store: list drains: %w", err)
	}
	defer rows.Close()
	out := []drains.Drain{}
	for rows.Next() {
		d, err := scanDrain(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list drains: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list drains: %w", err)
	}
	return out, nil
}

// DrainOf implements drains.Store.
func (s *Store) DrainOf(ctx context.Context, appID, id string) (drains.Drain, error) {
	if _, err := uuid.Parse(id); err != nil {
		return drains.Drain{}, drains.ErrNotFound
	}
	d, err := scanDrain(s.pool.QueryRow(ctx, `SELECT `+drainColumns+` FROM drains d WHERE d.app_id = $1 AND d.id = $2`, appID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return drains.Drain{}, drains.ErrNotFound
	}
	if err != nil {
		return drains.Drain{}, fmt.Errorf("store: read drain: %w", err)
	}
	return d, nil
}

// DeleteDrain implements drains.Store.
func (s *Store) DeleteDrain(ctx context.Context, appID, id string) error {
	if _, err := uuid.Parse(id); err != nil {
		return drains.ErrNotFound
	}
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM drains WHERE app_id = $1 AND id = $2`, appID, id)
		if err != nil {
			return fmt.Errorf("store: delete drain: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return drains.ErrNotFound
		}
		return nil
	})
}

// ClaimDrains implements drains.Store. SKIP LOCKED: two replicas claiming at once take
// different drains rather than wait on each other.
func (s *Store) ClaimDrains(ctx context.Context, owner string, lease time.Duration, n int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `
		UPDATE drains SET lease_owner = $1, lease_until = now() + $2::interval
		WHERE id IN (
			SELECT d.id FROM drains d JOIN apps a ON a.app_id = d.app_id AND a.deleted_at IS NULL
			WHERE d.lease_until < now() OR d.lease_owner = $1
			ORDER BY d.id LIMIT $3 FOR UPDATE OF d SKIP LOCKED)
		RETURNING id`, owner, lease, n)
	if err != nil {
		return nil, fmt.Errorf("store: claim drains: %w", err)
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id uuid.UUID
		err := r.Scan(&id)
		return id.String(), err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim drains: %w", err)
	}
	return ids, nil
}

// RenewLease implements drains.Store.
func (s *Store) RenewLease(ctx context.Context, id, owner string, lease time.Duration) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE drains SET lease_until = now() + $3::interval
		WHERE id = $1 AND lease_owner = $2 AND lease_until > now()`, id, owner, lease)
	if err != nil {
		return false, fmt.Errorf("store: renew drain lease: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseLease implements drains.Store.
func (s *Store) ReleaseLease(ctx context.Context, id, owner string) error {
	_, err := s.pool.Exec(ctx, `UPDATE drains SET lease_until = '-infinity' WHERE id = $1 AND lease_owner = $2`, id, owner)
	if err != nil {
		return fmt.Errorf("store: release drain lease: %w", err)
	}
	return nil
}

// SendTarget implements drains.Store.
func (s *Store) SendTarget(ctx context.Context, id string) (drains.Drain, string, error) {
	var slug string
	row := s.pool.QueryRow(ctx, `SELECT `+drainColumns+`, a.slug FROM drains d JOIN apps a ON a.app_id = d.app_id WHERE d.id = $1`, id)
	var (
		d          drains.Drain
		did, app   uuid.UUID
		kind, stat string
	)
	err := row.Scan(&did, &app, &d.AccountID, &d.URL, &kind, &d.Secret, &stat, &d.CreatedAt,
		&d.LastDeliveryAt, &d.LastError, &d.Delivered24h, &d.Dropped24h, &slug)
	if errors.Is(err, pgx.ErrNoRows) {
		return drains.Drain{}, "", drains.ErrNotFound
	}
	if err != nil {
		return drains.Drain{}, "", fmt.Errorf("store: drain to send: %w", err)
	}
	d.ID, d.AppID, d.Kind, d.Status = did.String(), app.String(), drains.Kind(kind), drains.Status(stat)
	return d, slug, nil
}

// Pending implements drains.Store. The join finds each line by the entries' own index
// (app_id, ts, id) in its day's partition.
func (s *Store) Pending(ctx context.Context, drainID string, limit int) ([]logs.Entry, []drains.Key, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT b.ts, b.entry_id, e.id IS NOT NULL, COALESCE(e.stream, ''), e.deploy_id, COALESCE(e.message, ''), COALESCE(e.process, '')
		FROM (SELECT ts, entry_id, app_id FROM drain_backlog WHERE drain_id = $1 ORDER BY ts, entry_id LIMIT $2) b
		LEFT JOIN log_entries e ON e.app_id = b.app_id AND e.ts = b.ts AND e.id = b.entry_id
		ORDER BY b.ts, b.entry_id`, drainID, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("store: drain backlog: %w", err)
	}
	defer rows.Close()
	var (
		entries []logs.Entry
		keys    []drains.Key
	)
	for rows.Next() {
		var (
			k                    drains.Key
			found                bool
			stream, msg, process string
			deploy               pgtype.UUID
		)
		if err := rows.Scan(&k.TS, &k.EntryID, &found, &stream, &deploy, &msg, &process); err != nil {
			return nil, nil, fmt.Errorf("store: drain backlog: %w", err)
		}
		keys = append(keys, k)
		if !found {
			continue
		}
		e := logs.Entry{ID: k.EntryID, Timestamp: k.TS.UTC(), Stream: logs.Stream(stream), Message: msg, Process: process}
		if deploy.Valid {
			e.DeployID = uuid.UUID(deploy.Bytes).String()
		}
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("store: drain backlog: %w", err)
	}
	return entries, keys, nil
}

// addCount adds to the drain's counts of at's hour.
func addCount(ctx context.Context, tx pgx.Tx, drainID string, at time.Time, delivered, dropped int64) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO drain_counts (drain_id, hour, delivered, dropped) VALUES ($1, date_trunc('hour', $2::timestamptz), $3, $4)
		ON CONFLICT (drain_id, hour) DO UPDATE
		SET delivered = drain_counts.delivered + EXCLUDED.delivered, dropped = drain_counts.dropped + EXCLUDED.dropped`,
		drainID, at, delivered, dropped)
	if err != nil {
		return fmt.Errorf("store: drain counts: %w", err)
	}
	return nil
}

// Acknowledge implements drains.Store.
func (s *Store) Acknowledge(ctx context.Context, drainID string, keys []drains.Key, delivered int, lastID int64, at time.Time) error {
	ts := make([]time.Time, len(keys))
	ids := make([]int64, len(keys))
	for i, k := range keys {
		ts[i], ids[i] = k.TS, k.EntryID
	}
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// The drain's row first, then its backlog: the order a drain's delete locks them in
		// (the row, then the cascade), so the two never wait on each other in a circle.
		tag, err := tx.Exec(ctx, `UPDATE drains SET status = 'active', failures = 0, last_error = NULL,
			last_delivery_at = $2, last_entry_id = COALESCE(NULLIF($3, 0), last_entry_id) WHERE id = $1`, drainID, at, lastID)
		if err != nil {
			return fmt.Errorf("store: acknowledge: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil // deleted meanwhile, backlog and all
		}
		if _, err := tx.Exec(ctx, `DELETE FROM drain_backlog b USING unnest($2::timestamptz[], $3::bigint[]) AS k(ts, id)
			WHERE b.drain_id = $1 AND b.ts = k.ts AND b.entry_id = k.id`, drainID, ts, ids); err != nil {
			return fmt.Errorf("store: acknowledge: %w", err)
		}
		if delivered == 0 {
			return nil
		}
		return addCount(ctx, tx, drainID, at, int64(delivered), 0)
	})
}

// RecordFailure implements drains.Store.
func (s *Store) RecordFailure(ctx context.Context, drainID, reason string, failingAfter int, at time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE drains SET failures = failures + 1, last_error = $2,
		status = CASE WHEN failures + 1 >= $3 THEN 'failing' ELSE status END WHERE id = $1`, drainID, reason, failingAfter)
	if err != nil {
		return fmt.Errorf("store: drain failure: %w", err)
	}
	return nil
}

// Trim implements drains.Store: past max rows, those past the newest keep go, oldest first.
// The notice is stored in the same transaction as the drop and its count, the way
// ingestion stores lines (the shared ingest lock, CopyEntries), so a drop is never counted
// without being told.
func (s *Store) Trim(ctx context.Context, drainID string, max, keep int, at time.Time, notice func(dropped int64) string) (int64, error) {
	if err := s.EnsurePartitions(ctx, []time.Time{logs.Day(at)}); err != nil {
		return 0, err
	}
	var dropped int64
	err := pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		dropped = 0 // a retried transaction starts again
		// The drain's row first, as Acknowledge and a delete lock it (see there).
		var app uuid.UUID
		err := tx.QueryRow(ctx, `SELECT app_id FROM drains WHERE id = $1 FOR NO KEY UPDATE`, drainID).Scan(&app)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store: trim drain backlog: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM drain_backlog WHERE drain_id = $1`, drainID).Scan(&n); err != nil {
			return fmt.Errorf("store: trim drain backlog: %w", err)
		}
		if n <= max {
			return nil
		}
		tag, err := tx.Exec(ctx, `
			DELETE FROM drain_backlog b USING (
				SELECT ts, entry_id FROM drain_backlog WHERE drain_id = $1
				ORDER BY ts DESC, entry_id DESC OFFSET $2) old
			WHERE b.drain_id = $1 AND b.ts = old.ts AND b.entry_id = old.entry_id`, drainID, keep)
		if err != nil {
			return fmt.Errorf("store: trim drain backlog: %w", err)
		}
		dropped = tag.RowsAffected()
		if dropped == 0 {
			return nil
		}
		if err := addCount(ctx, tx, drainID, at, 0, dropped); err != nil {
			return err
		}
		in := s.bind(tx)
		if err := in.LockIngestShared(ctx); err != nil {
			return err
		}
		_, err = in.CopyEntries(ctx, []logs.Entry{{AppID: app.String(), Stream: logs.StreamSystem, Timestamp: at, Message: notice(dropped)}})
		return err
	})
	return dropped, err
}

// PlanDrains implements usecase.DrainLimitSource.
func (s *Store) PlanDrains(ctx context.Context, accountID string) (int, string, bool, error) {
	var (
		n    *int
		plan string
	)
	err := s.pool.QueryRow(ctx, `SELECT drains, plan FROM account_plans WHERE account_id = $1`, accountID).Scan(&n, &plan)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && n == nil) {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, fmt.Errorf("store: plan drains: %w", err)
	}
	return *n, plan, true, nil
}
