package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/apps/internal/accounts"
)

const accountColumns = `account_id, coalesce(default_region, ''), plan, apps_limit, domains_limit, plan_version`

func scanAccount(row pgx.Row) (accounts.Account, error) {
	var a accounts.Account
	var plan *string
	var apps, domains, version *int64
	if err := row.Scan(&a.ID, &a.DefaultRegion, &plan, &apps, &domains, &version); err != nil {
		return accounts.Account{}, err
	}
	if plan != nil && apps != nil && domains != nil && version != nil {
		a.Plan = &accounts.Plan{Name: *plan, Apps: *apps, CustomDomains: *domains, Version: *version}
	}
	return a, nil
}

// Account implements usecase.Tx.
func (r *repo) Account(ctx context.Context, id string) (accounts.Account, error) {
	a, err := scanAccount(r.q.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE account_id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return accounts.Account{ID: id}, nil
	}
	if err != nil {
		return accounts.Account{}, wrap("account", err)
	}
	return a, nil
}

// SavePlan implements usecase.Tx. The plan is replaced only by a strictly higher version.
func (r *repo) SavePlan(ctx context.Context, accountID string, p accounts.Plan) error {
	_, err := r.q.Exec(ctx, `
INSERT INTO accounts (account_id, plan, apps_limit, domains_limit, plan_version)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (account_id) DO UPDATE
   SET plan = EXCLUDED.plan, apps_limit = EXCLUDED.apps_limit,
       domains_limit = EXCLUDED.domains_limit, plan_version = EXCLUDED.plan_version
 WHERE accounts.plan_version IS NULL OR accounts.plan_version < EXCLUDED.plan_version`,
		accountID, p.Name, p.Apps, p.CustomDomains, p.Version)
	if err != nil {
		return wrap("save plan", err)
	}
	return nil
}

// SaveRegion implements usecase.Tx.
func (r *repo) SaveRegion(ctx context.Context, accountID, region string, at time.Time) error {
	_, err := r.q.Exec(ctx, `
INSERT INTO accounts (account_id, default_region, region_at) VALUES ($1, $2, $3)
ON CONFLICT (account_id) DO UPDATE
   SET default_region = EXCLUDED.default_region, region_at = EXCLUDED.region_at
 WHERE accounts.region_at IS NULL OR accounts.region_at <= EXCLUDED.region_at`, accountID, region, at)
	if err != nil {
		return wrap("save region", err)
	}
	return nil
}

// LockAccount implements usecase.Tx.
func (r *repo) LockAccount(ctx context.Context, id string) (accounts.Account, error) {
	if _, err := r.q.Exec(ctx, `INSERT INTO accounts (account_id) VALUES ($1) ON CONFLICT DO NOTHING`, id); err != nil {
		return accounts.Account{}, wrap("lock account", err)
	}
	a, err := scanAccount(r.q.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE account_id = $1 FOR UPDATE`, id))
	if err != nil {
		return accounts.Account{}, wrap("lock account", err)
	}
	return a, nil
}
