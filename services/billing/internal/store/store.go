// Package store keeps billing's records in Postgres, in billing's own schema.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
)

// Store reads and writes account plans. Writes run in the caller's transaction, so that the
// outbox event announcing a change commits together with it.
type Store struct {
	pool *pgxpool.Pool
}

// New wraps a pool connected as billing's role.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// InTx runs fn in one transaction.
func (s *Store) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgstore.InTx(ctx, s.pool, fn)
}

// accountRow is an account_plans row as it is stored.
type accountRow struct {
	AccountID uuid.UUID
	Email     string
	Plan      string
	Version   int64
	UpdatedAt time.Time
}

const accountColumns = `account_id, email, plan, version, updated_at`

func (r accountRow) toAccount() (accounts.Account, error) {
	p, err := catalog.Lookup(r.Plan)
	if err != nil {
		return accounts.Account{}, fmt.Errorf("store: account %s has plan %q: %w", r.AccountID, r.Plan, err)
	}
	return accounts.Account{ID: r.AccountID, Email: r.Email, Plan: p.Name, Version: r.Version, UpdatedAt: r.UpdatedAt.UTC()}, nil
}

func scanAccount(row pgx.Row) (accounts.Account, error) {
	var r accountRow
	err := row.Scan(&r.AccountID, &r.Email, &r.Plan, &r.Version, &r.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return accounts.Account{}, accounts.ErrNotFound
	}
	if err != nil {
		return accounts.Account{}, fmt.Errorf("store: read account: %w", err)
	}
	return r.toAccount()
}

// Account reads one account's record; accounts.ErrNotFound when billing has none.
func (s *Store) Account(ctx context.Context, id uuid.UUID) (accounts.Account, error) {
	return scanAccount(s.pool.QueryRow(ctx, `SELECT `+accountColumns+` FROM account_plans WHERE account_id = $1`, id))
}

// InsertAccount records a unless the account is recorded already; inserted tells which.
// A repeat leaves the existing record untouched, whatever plan it is on by now.
func (s *Store) InsertAccount(ctx context.Context, tx pgx.Tx, a accounts.Account) (inserted bool, err error) {
	tag, err := tx.Exec(ctx, `INSERT INTO account_plans (`+accountColumns+`) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (account_id) DO NOTHING`,
		a.ID, a.Email, string(a.Plan), a.Version, a.UpdatedAt)
	if err != nil {
		return false, fmt.Errorf("store: insert account: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// LockAccount reads the account ref names and locks its row until tx ends, so concurrent
// plan changes apply one after the other and each gets its own version.
func (s *Store) LockAccount(ctx context.Context, tx pgx.Tx, ref accounts.Ref) (accounts.Account, error) {
	if ref.Email == "" {
		return scanAccount(tx.QueryRow(ctx, `SELECT `+accountColumns+` FROM account_plans WHERE account_id = $1 FOR UPDATE`, ref.ID))
	}
	// Two rows are enough to tell "one" from "more than one".
	rows, err := tx.Query(ctx, `SELECT `+accountColumns+` FROM account_plans WHERE lower(email) = lower($1) ORDER BY account_id LIMIT 2 FOR UPDATE`, ref.Email)
	if err != nil {
		return accounts.Account{}, fmt.Errorf("store: find account by email: %w", err)
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.Account, error) { return scanAccount(r) })
	if err != nil {
		return accounts.Account{}, err
	}
	switch len(found) {
	case 0:
		return accounts.Account{}, accounts.ErrNotFound
	case 1:
		return found[0], nil
	}
	return accounts.Account{}, accounts.ErrAmbiguous
}

// UpdateAccount writes a's plan, version and time over its record.
func (s *Store) UpdateAccount(ctx context.Context, tx pgx.Tx, a accounts.Account) error {
	tag, err := tx.Exec(ctx, `UPDATE account_plans SET plan = $2, version = $3, updated_at = $4 WHERE account_id = $1`,
		a.ID, string(a.Plan), a.Version, a.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: update account: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return accounts.ErrNotFound
	}
	return nil
}

// UnsentEvents counts outbox rows not yet published. The outbox is the bus's table, created in
// billing's schema by bus.Migrations; the operator command waits for this to reach zero.
func (s *Store) UnsentEvents(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE sent_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count unsent events: %w", err)
	}
	return n, nil
}
