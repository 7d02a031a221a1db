package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// AppBySlug finds the team's live (not deleted) app with slug (account_id is the owning
// team's id).
func (s *Store) AppBySlug(ctx context.Context, accountID, slug string) (usecase.App, error) {
	var a usecase.App
	err := s.pool.QueryRow(ctx, `SELECT id, account_id, slug, kind, zone FROM apps
		WHERE account_id = $1 AND slug = $2 AND deleted_at IS NULL`, accountID, slug).
		Scan(&a.ID, &a.AccountID, &a.Slug, &a.Kind, &a.Zone)
	if errors.Is(err, pgx.ErrNoRows) {
		return usecase.App{}, deploy.ErrAppNotFound
	}
	if err != nil {
		return usecase.App{}, fmt.Errorf("store: load app: %w", err)
	}
	return a, nil
}

// AppTeam finds the team owning the live app slug (slugs are global). Should an out-of-order
// pair of events leave two live rows, the newest app wins.
func (s *Store) AppTeam(ctx context.Context, slug string) (string, bool, error) {
	var team string
	err := s.pool.QueryRow(ctx, `SELECT account_id FROM apps WHERE slug = $1 AND deleted_at IS NULL
		ORDER BY created_at DESC LIMIT 1`, slug).Scan(&team)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: find app's team: %w", err)
	}
	return team, true, nil
}

func (t *txStore) App(ctx context.Context, appID string) (usecase.App, error) {
	var a usecase.App
	err := t.tx.QueryRow(ctx, `SELECT id, account_id, slug, kind, zone, deleted_at IS NOT NULL FROM apps WHERE id = $1`, appID).
		Scan(&a.ID, &a.AccountID, &a.Slug, &a.Kind, &a.Zone, &a.Deleted)
	if errors.Is(err, pgx.ErrNoRows) {
		return usecase.App{}, deploy.ErrAppNotFound
	}
	if err != nil {
		return usecase.App{}, fmt.Errorf("store: load app: %w", err)
	}
	return a, nil
}

// SaveApp records an app from apps.app.created; a repeat changes nothing, and a delete that
// arrived first (events are not ordered) keeps the app deleted.
func (t *txStore) SaveApp(ctx context.Context, a usecase.App, createdAt time.Time) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO apps (id, account_id, slug, kind, zone, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`, a.ID, a.AccountID, a.Slug, a.Kind, a.Zone, createdAt)
	if err != nil {
		return fmt.Errorf("store: save app: %w", err)
	}
	return nil
}

// MarkAppDeleted records a delete; an app never seen is recorded as a tombstone so a late
// created event cannot bring it back.
func (t *txStore) MarkAppDeleted(ctx context.Context, appID string, at time.Time) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO apps (id, account_id, slug, kind, zone, created_at, deleted_at)
		VALUES ($1, '', '', '', '', $2, $2)
		ON CONFLICT (id) DO UPDATE SET deleted_at = coalesce(apps.deleted_at, EXCLUDED.deleted_at)`, appID, at)
	if err != nil {
		return fmt.Errorf("store: mark app deleted: %w", err)
	}
	return nil
}

// Plan returns the account's plan copy; ok is false when none is recorded yet.
func (s *Store) Plan(ctx context.Context, accountID string) (usecase.Plan, bool, error) {
	var p usecase.Plan
	err := s.pool.QueryRow(ctx, `SELECT plan, concurrent_deploys, upload_bytes, build_minutes, min_scale, cpu, version,
		process_types, instances_per_process, instances_total, cron_jobs, cron_min_interval_minutes, cron_timeout_seconds,
		instance_memory_bytes, previews, preview_max_ttl_hours
		FROM plans WHERE account_id = $1`, accountID).
		Scan(&p.Name, &p.ConcurrentDeploys, &p.UploadBytes, &p.BuildMinutes, &p.MinScale, &p.CPU, &p.Version,
			&p.ProcessTypes, &p.InstancesPerProcess, &p.InstancesTotal, &p.CronJobs, &p.CronMinIntervalMinutes, &p.CronTimeoutSeconds,
			&p.InstanceMemoryBytes, &p.Previews, &p.PreviewMaxTTLHours)
	if errors.Is(err, pgx.ErrNoRows) {
		return usecase.Plan{}, false, nil
	}
	if err != nil {
		return usecase.Plan{}, false, fmt.Errorf("store: load plan: %w", err)
	}
	return p, true, nil
}

// SavePlan keeps the copy with the highest version; an equal version rewrites nothing.
func (t *txStore) SavePlan(ctx context.Context, accountID string, p usecase.Plan) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO plans (account_id, plan, concurrent_deploys, upload_bytes, build_minutes, min_scale, cpu, version,
			process_types, instances_per_process, instances_total, cron_jobs, cron_min_interval_minutes, cron_timeout_seconds,
			instance_memory_bytes, previews, preview_max_ttl_hours)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT (account_id) DO UPDATE SET plan = EXCLUDED.plan, concurrent_deploys = EXCLUDED.concurrent_deploys,
			upload_bytes = EXCLUDED.upload_bytes, build_minutes = EXCLUDED.build_minutes, min_scale = EXCLUDED.min_scale,
			cpu = EXCLUDED.cpu, version = EXCLUDED.version, process_types = EXCLUDED.process_types,
			instances_per_process = EXCLUDED.instances_per_process, instances_total = EXCLUDED.instances_total,
			cron_jobs = EXCLUDED.cron_jobs, cron_min_interval_minutes = EXCLUDED.cron_min_interval_minutes,
			cron_timeout_seconds = EXCLUDED.cron_timeout_seconds, instance_memory_bytes = EXCLUDED.instance_memory_bytes,
			previews = EXCLUDED.previews, preview_max_ttl_hours = EXCLUDED.preview_max_ttl_hours
		WHERE plans.version < EXCLUDED.version`,
		accountID, p.Name, p.ConcurrentDeploys, p.UploadBytes, p.BuildMinutes, p.MinScale, p.CPU, p.Version,
		p.ProcessTypes, p.InstancesPerProcess, p.InstancesTotal, p.CronJobs, p.CronMinIntervalMinutes, p.CronTimeoutSeconds,
		p.InstanceMemoryBytes, p.Previews, p.PreviewMaxTTLHours)
	if err != nil {
		return fmt.Errorf("store: save plan: %w", err)
	}
	return nil
}

// Hold is the account's payment-failure hold as last announced; found is false when billing
// never announced one.
func (s *Store) Hold(ctx context.Context, accountID string) (h deploy.Hold, found bool, err error) {
	var since, refused, stops, reclaim *time.Time
	err = s.pool.QueryRow(ctx, `SELECT active, since, deploys_refused_from, serving_stops_from, reclaimable_from, version
		FROM billing_holds WHERE account_id = $1`, accountID).Scan(&h.Active, &since, &refused, &stops, &reclaim, &h.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return deploy.Hold{}, false, nil
	}
	if err != nil {
		return deploy.Hold{}, false, fmt.Errorf("store: load hold: %w", err)
	}
	for _, f := range []struct {
		src *time.Time
		dst *time.Time
	}{{since, &h.Since}, {refused, &h.DeploysRefusedFrom}, {stops, &h.ServingStopsFrom}, {reclaim, &h.ReclaimableFrom}} {
		if f.src != nil {
			*f.dst = f.src.UTC()
		}
	}
	return h, true, nil
}

// SaveHold keeps the copy with the highest version; an equal version rewrites nothing.
func (t *txStore) SaveHold(ctx context.Context, accountID string, h deploy.Hold) error {
	opt := func(v time.Time) *time.Time {
		if !h.Active || v.IsZero() {
			return nil
		}
		return &v
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO billing_holds (account_id, active, since, deploys_refused_from, serving_stops_from, reclaimable_from, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (account_id) DO UPDATE SET active = EXCLUDED.active, since = EXCLUDED.since,
			deploys_refused_from = EXCLUDED.deploys_refused_from, serving_stops_from = EXCLUDED.serving_stops_from,
			reclaimable_from = EXCLUDED.reclaimable_from, version = EXCLUDED.version
		WHERE billing_holds.version < EXCLUDED.version`,
		accountID, h.Active, opt(h.Since), opt(h.DeploysRefusedFrom), opt(h.ServingStopsFrom), opt(h.ReclaimableFrom), h.Version)
	if err != nil {
		return fmt.Errorf("store: save hold: %w", err)
	}
	return nil
}
