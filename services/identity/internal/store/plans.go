package store

import (
	"context"

	"tori.dev/services/identity/internal/account"
)

func (r *repo) Plan(ctx context.Context, accountID string) (account.Plan, error) {
	var p account.Plan
	pl := &p.Limits.Processes
	err := r.q.QueryRow(ctx, `SELECT plan, max_custom_domains, database_connections, database_bytes,
			process_types, instances_per_process, instances_total, cron_jobs,
			cron_min_interval_minutes, cron_timeout_seconds, instance_memory_bytes, members, audit_retention_days,
			version, updated_at
		FROM account_plans WHERE account_id = $1`, accountID).
		Scan(&p.Name, &p.Limits.MaxCustomDomains, &p.Limits.DatabaseConnections, &p.Limits.DatabaseBytes,
			&pl.ProcessTypes, &pl.InstancesPerProcess, &pl.InstancesTotal, &pl.CronJobs,
			&pl.CronMinIntervalMinutes, &pl.CronTimeoutSeconds, &pl.InstanceMemoryBytes, &p.Limits.Members, &p.Limits.AuditRetentionDays,
			&p.Version, &p.UpdatedAt)
	return p, notFound(err, account.ErrNotFound)
}

// SavePlan upserts in one statement, so two deliveries racing cannot let the older version
// win. A copy kept before plans had process limits (process_types 0) is replaced by one that
// has them at the same version too: it is the same plan, only now complete.
func (r *repo) SavePlan(ctx context.Context, accountID string, p account.Plan) (bool, error) {
	pl := p.Limits.Processes
	tag, err := r.q.Exec(ctx, `INSERT INTO account_plans
		(account_id, plan, max_custom_domains, database_connections, database_bytes,
		 process_types, instances_per_process, instances_total, cron_jobs,
		 cron_min_interval_minutes, cron_timeout_seconds, instance_memory_bytes, members, audit_retention_days,
		 version, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (account_id) DO UPDATE SET
			plan = EXCLUDED.plan,
			max_custom_domains = EXCLUDED.max_custom_domains,
			database_connections = EXCLUDED.database_connections,
			database_bytes = EXCLUDED.database_bytes,
			process_types = EXCLUDED.process_types,
			instances_per_process = EXCLUDED.instances_per_process,
			instances_total = EXCLUDED.instances_total,
			cron_jobs = EXCLUDED.cron_jobs,
			cron_min_interval_minutes = EXCLUDED.cron_min_interval_minutes,
			cron_timeout_seconds = EXCLUDED.cron_timeout_seconds,
			instance_memory_bytes = EXCLUDED.instance_memory_bytes,
			members = EXCLUDED.members,
			audit_retention_days = EXCLUDED.audit_retention_days,
			version = EXCLUDED.version,
			updated_at = EXCLUDED.updated_at
		WHERE account_plans.version < EXCLUDED.version
			OR (account_plans.version = EXCLUDED.version AND account_plans.process_types = 0 AND EXCLUDED.process_types > 0)
			OR (account_plans.version = EXCLUDED.version AND account_plans.members = 0 AND EXCLUDED.members > 0)`,
		accountID, p.Name, p.Limits.MaxCustomDomains, p.Limits.DatabaseConnections, p.Limits.DatabaseBytes,
		pl.ProcessTypes, pl.InstancesPerProcess, pl.InstancesTotal, pl.CronJobs,
		pl.CronMinIntervalMinutes, pl.CronTimeoutSeconds, pl.InstanceMemoryBytes, p.Limits.Members, p.Limits.AuditRetentionDays,
		p.Version, p.UpdatedAt)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}
