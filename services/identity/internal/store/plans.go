package store

import (
	"context"

	"tori.dev/services/identity/internal/account"
)

func (r *repo) Plan(ctx context.Context, accountID string) (account.Plan, error) {
	var p account.Plan
	err := r.q.QueryRow(ctx, `SELECT plan, max_custom_domains, database_connections, database_bytes, version, updated_at
		FROM account_plans WHERE account_id = $1`, accountID).
		Scan(&p.Name, &p.Limits.MaxCustomDomains, &p.Limits.DatabaseConnections, &p.Limits.DatabaseBytes, &p.Version, &p.UpdatedAt)
	return p, notFound(err, account.ErrNotFound)
}

// SavePlan upserts in one statement, so two deliveries racing cannot let the older version
// win.
func (r *repo) SavePlan(ctx context.Context, accountID string, p account.Plan) (bool, error) {
	tag, err := r.q.Exec(ctx, `INSERT INTO account_plans
		(account_id, plan, max_custom_domains, database_connections, database_bytes, version, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (account_id) DO UPDATE SET
			plan = EXCLUDED.plan,
			max_custom_domains = EXCLUDED.max_custom_domains,
			database_connections = EXCLUDED.database_connections,
			database_bytes = EXCLUDED.database_bytes,
			version = EXCLUDED.version,
			updated_at = EXCLUDED.updated_at
		WHERE account_plans.version < EXCLUDED.version`,
		accountID, p.Name, p.Limits.MaxCustomDomains, p.Limits.DatabaseConnections, p.Limits.DatabaseBytes, p.Version, p.UpdatedAt)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}
