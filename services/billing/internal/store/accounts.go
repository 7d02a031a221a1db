package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
)

// accountRow is an account_plans row as it is stored.
type accountRow struct {
	AccountID uuid.UUID
	Email     string
	Plan      string
	Version   int64
	UpdatedAt time.Time
	Personal  bool
	Deleted   bool
}

const accountColumns = `account_id, email, plan, version, updated_at, personal, deleted_at IS NOT NULL`

func (r accountRow) toAccount() (accounts.Account, error) {
	p, err := catalog.Lookup(r.Plan)
	if err != nil {
		return accounts.Account{}, fmt.Errorf("store: account %s has plan %q: %w", r.AccountID, r.Plan, err)
	}
	return accounts.Account{ID: r.AccountID, Email: r.Email, Plan: p.Name, Version: r.Version, UpdatedAt: r.UpdatedAt.UTC(),
		Personal: r.Personal, Deleted: r.Deleted}, nil
}

func scanAccount(row pgx.Row) (accounts.Account, error) {
	var r accountRow
	err := row.Scan(&r.AccountID, &r.Email, &r.Plan, &r.Version, &r.UpdatedAt, &r.Personal, &r.Deleted)
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
func (t Tx) InsertAccount(ctx context.Context, a accounts.Account) (inserted bool, err error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO account_plans (account_id, email, plan, version, updated_at, personal)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id) DO NOTHING`,
		a.ID, a.Email, string(a.Plan), a.Version, a.UpdatedAt, a.Personal)
	if err != nil {
		return false, fmt.Errorf("store: insert account: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// LockAccount reads the account ref names and locks its row until the transaction ends, so concurrent
// plan changes apply one after the other and each gets its own version.
func (t Tx) LockAccount(ctx context.Context, ref accounts.Ref) (accounts.Account, error) {
	if ref.Email == "" {
		return scanAccount(t.tx.QueryRow(ctx, `SELECT `+accountColumns+` FROM account_plans WHERE account_id = $1 FOR UPDATE`, ref.ID))
	}
	// Two rows are enough to tell "one" from "more than one". An email names a person, so
	// their personal team, never the teams they made.
	rows, err := t.tx.Query(ctx, `SELECT `+accountColumns+` FROM account_plans WHERE lower(email) = lower($1) AND personal
		ORDER BY account_id LIMIT 2 FOR UPDATE`, ref.Email)
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
func (t Tx) UpdateAccount(ctx context.Context, a accounts.Account) error {
	tag, err := t.tx.Exec(ctx, `UPDATE account_plans SET plan = $2, version = $3, updated_at = $4 WHERE account_id = $1`,
		a.ID, string(a.Plan), a.Version, a.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: update account: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return accounts.ErrNotFound
	}
	return nil
}

// MarkTeamDeleted marks the team's row deleted, recording a tombstone when billing has none
// (the deletion overtook the creation), so a late team.created finds it and changes nothing.
func (t Tx) MarkTeamDeleted(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO account_plans (account_id, plan, version, updated_at, personal, deleted_at)
		VALUES ($1, 'nestling', 1, $2, false, $2)
		ON CONFLICT (account_id) DO UPDATE SET deleted_at = coalesce(account_plans.deleted_at, excluded.deleted_at)`, id, at)
	if err != nil {
		return fmt.Errorf("store: mark team deleted: %w", err)
	}
	return nil
}
