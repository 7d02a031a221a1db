package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/apps/internal/accounts"
)

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

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

// Account implements accounts.Store.
func (s *Store) Account(ctx context.Context, id string) (accounts.Account, error) {
	a, err := scanAccount(s.pool.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE account_id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return accounts.Account{ID: id}, nil
	}
	if err != nil {
		return accounts.Account{}, fmt.Errorf("store: account: %w", err)
	}
	return a, nil
}

// SavePlan implements accounts.Store.
func (s *Store) SavePlan(ctx context.Context, accountID string, p accounts.Plan) error {
	if _, err := s.pool.Exec(ctx, savePlanSQL, accountID, p.Name, p.Apps, p.CustomDomains, p.Version); err != nil {
		return fmt.Errorf("store: save plan: %w", err)
	}
	return nil
}

// The plan is replaced only by a strictly higher version, so redelivered and reordered
// events leave the newest plan in place.
const savePlanSQL = `
INSERT INTO accounts (account_id, plan, apps_limit, domains_limit, plan_version)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (account_id) DO UPDATE
   SET plan = EXCLUDED.plan, apps_limit = EXCLUDED.apps_limit,
       domains_limit = EXCLUDED.domains_limit, plan_version = EXCLUDED.plan_version
 WHERE accounts.plan_version IS NULL OR accounts.plan_version < EXCLUDED.plan_version`

// SavePlanTx records a plan from billing's event inside the consumer's transaction.
func SavePlanTx(ctx context.Context, tx pgx.Tx, accountID string, p accounts.Plan) error {
	_, err := tx.Exec(ctx, savePlanSQL, accountID, p.Name, p.Apps, p.CustomDomains, p.Version)
	return err
}

// SaveRegionTx records an account's default region from identity's event, unless a newer
// event already set it.
func SaveRegionTx(ctx context.Context, tx pgx.Tx, accountID, region string, at time.Time) error {
	_, err := tx.Exec(ctx, `
INSERT INTO accounts (account_id, default_region, region_at) VALUES ($1, $2, $3)
ON CONFLICT (account_id) DO UPDATE
   SET default_region = EXCLUDED.default_region, region_at = EXCLUDED.region_at
 WHERE accounts.region_at IS NULL OR accounts.region_at <= EXCLUDED.region_at`, accountID, region, at)
	return err
}

// lockAccount reads the account's copy and locks it for the rest of tx, creating an empty
// row first if needed. Holding the lock serialises the account's creates, so two concurrent
// requests cannot both take the last app (or hostname) the plan allows.
func lockAccount(ctx context.Context, tx pgx.Tx, id string) (accounts.Account, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO accounts (account_id) VALUES ($1) ON CONFLICT DO NOTHING`, id); err != nil {
		return accounts.Account{}, err
	}
	return scanAccount(tx.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE account_id = $1 FOR UPDATE`, id))
}
