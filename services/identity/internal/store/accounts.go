package store

import (
	"context"

	"tori.dev/services/identity/internal/account"
)

func (r *repo) LockEmail(ctx context.Context, email string) error {
	_, err := r.q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('identity.email:' || $1))`, email)
	return err
}

func (r *repo) UserByEmail(ctx context.Context, email string) (account.User, error) {
	var u account.User
	err := r.q.QueryRow(ctx, `SELECT id::text, account_id::text, email, name, created_at FROM users WHERE email = $1`, email).
		Scan(&u.ID, &u.AccountID, &u.Email, &u.Name, &u.CreatedAt)
	return u, notFound(err, account.ErrNotFound)
}

func (r *repo) CreateAccount(ctx context.Context, a account.Account, u account.User) error {
	if _, err := r.q.Exec(ctx, `INSERT INTO accounts (id, default_region, created_at, updated_at) VALUES ($1, $2, $3, $4)`,
		a.ID, string(a.DefaultRegion), a.CreatedAt, a.UpdatedAt); err != nil {
		return err
	}
	_, err := r.q.Exec(ctx, `INSERT INTO users (id, account_id, email, name, created_at) VALUES ($1, $2, $3, $4, $5)`,
		u.ID, u.AccountID, u.Email, u.Name, u.CreatedAt)
	return err
}

// accountSelect joins an account to its user; an account has exactly one today.
const accountSelect = `SELECT a.id::text, a.default_region, a.created_at, a.updated_at,
	u.id::text, u.account_id::text, u.email, u.name, u.created_at
	FROM accounts a JOIN users u ON u.account_id = a.id WHERE a.id = $1`

func (r *repo) Account(ctx context.Context, id string) (account.Account, account.User, error) {
	return r.scanAccount(ctx, accountSelect, id)
}

func (r *repo) LockAccount(ctx context.Context, id string) (account.Account, account.User, error) {
	return r.scanAccount(ctx, accountSelect+` FOR UPDATE OF a`, id)
}

func (r *repo) scanAccount(ctx context.Context, sql, id string) (account.Account, account.User, error) {
	var a account.Account
	var u account.User
	var region string
	err := r.q.QueryRow(ctx, sql, id).Scan(&a.ID, &region, &a.CreatedAt, &a.UpdatedAt,
		&u.ID, &u.AccountID, &u.Email, &u.Name, &u.CreatedAt)
	a.DefaultRegion = account.Region(region)
	return a, u, notFound(err, account.ErrNotFound)
}

func (r *repo) SaveAccount(ctx context.Context, a account.Account) error {
	tag, err := r.q.Exec(ctx, `UPDATE accounts SET default_region = $2, updated_at = $3 WHERE id = $1`,
		a.ID, string(a.DefaultRegion), a.UpdatedAt)
	if err == nil && tag.RowsAffected() == 0 {
		return account.ErrNotFound
	}
	return err
}
