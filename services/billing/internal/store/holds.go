package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/services/billing/internal/mirror"
)

// AccountHold is the account's hold as last announced; the zero value when it never had one.
func (s *Store) AccountHold(ctx context.Context, accountID uuid.UUID) (mirror.HoldRecord, error) {
	return accountHold(ctx, s.pool, accountID)
}

// AccountHold is the account's hold as last announced, inside the transaction.
func (t Tx) AccountHold(ctx context.Context, accountID uuid.UUID) (mirror.HoldRecord, error) {
	return accountHold(ctx, t.tx, accountID)
}

func accountHold(ctx context.Context, q querier, accountID uuid.UUID) (mirror.HoldRecord, error) {
	var h mirror.HoldRecord
	var since *time.Time
	err := q.QueryRow(ctx, `SELECT since, version FROM account_holds WHERE account_id = $1`, accountID).Scan(&since, &h.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return mirror.HoldRecord{}, nil
	}
	if err != nil {
		return mirror.HoldRecord{}, fmt.Errorf("store: read hold: %w", err)
	}
	h.Since = fromNull(since)
	return h, nil
}

// HoldSince is the first failed payment attempt among the account's outstanding invoices
// (open or uncollectible); the zero time when none is outstanding.
func (t Tx) HoldSince(ctx context.Context, accountID uuid.UUID) (time.Time, error) {
	var since *time.Time
	err := t.tx.QueryRow(ctx, `SELECT min(first_failed_at) FROM invoices
		WHERE account_id = $1 AND status IN ('open', 'uncollectible') AND first_failed_at IS NOT NULL`, accountID).Scan(&since)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: read hold start: %w", err)
	}
	return fromNull(since), nil
}

// SetAccountHold records the account's hold as announced.
func (t Tx) SetAccountHold(ctx context.Context, accountID uuid.UUID, h mirror.HoldRecord, now time.Time) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO account_holds (account_id, since, version, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (account_id) DO UPDATE SET since = EXCLUDED.since, version = EXCLUDED.version, updated_at = EXCLUDED.updated_at`,
		accountID, nullTime(h.Since), h.Version, now)
	if err != nil {
		return fmt.Errorf("store: write hold: %w", err)
	}
	return nil
}

// ActiveHolds are the accounts whose hold is on, with when each began.
func (s *Store) ActiveHolds(ctx context.Context) ([]mirror.ActiveHold, error) {
	rows, err := s.pool.Query(ctx, `SELECT account_id, since FROM account_holds WHERE since IS NOT NULL ORDER BY since`)
	if err != nil {
		return nil, fmt.Errorf("store: list holds: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (mirror.ActiveHold, error) {
		var h mirror.ActiveHold
		err := r.Scan(&h.AccountID, &h.Since)
		h.Since = h.Since.UTC()
		return h, err
	})
}

// RecordNotice records that a notice of the hold that began at since was announced; first is
// false when it was already.
func (t Tx) RecordNotice(ctx context.Context, accountID uuid.UUID, since time.Time, notice string, now time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO hold_notices (account_id, since, notice, sent_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, accountID, since, notice, now)
	if err != nil {
		return false, fmt.Errorf("store: record notice: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
