package store

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/zoneagent/internal/usecase"
)

// SetDomain records a hostname active for appID as of at, unless a later change to it is
// recorded already or the app is deleted.
func (t Tx) SetDomain(ctx context.Context, hostname, appID string, at time.Time) error {
	_, err := t.tx.Exec(ctx, `
		INSERT INTO domains (hostname, app_id, active, changed_at)
		SELECT $1, $2, true, $3 WHERE NOT EXISTS (SELECT 1 FROM deleted_apps WHERE app_id = $2)
		ON CONFLICT (hostname) DO UPDATE SET app_id = EXCLUDED.app_id, active = true, changed_at = EXCLUDED.changed_at
		WHERE domains.changed_at < EXCLUDED.changed_at`, strings.ToLower(hostname), appID, at)
	return err
}

// RemoveDomain records a hostname no longer served for appID as of at, unless a later change
// to it (another app's claim among them) is recorded already.
func (t Tx) RemoveDomain(ctx context.Context, hostname, appID string, at time.Time) error {
	_, err := t.tx.Exec(ctx, `
		INSERT INTO domains (hostname, app_id, active, changed_at) VALUES ($1, $2, false, $3)
		ON CONFLICT (hostname) DO UPDATE SET app_id = EXCLUDED.app_id, active = false, changed_at = EXCLUDED.changed_at
		WHERE domains.changed_at < EXCLUDED.changed_at`, strings.ToLower(hostname), appID, at)
	return err
}

// Domains returns every active hostname.
func (s *Store) Domains(ctx context.Context) ([]usecase.Domain, error) {
	rows, err := s.pool.Query(ctx, `SELECT hostname, app_id FROM domains WHERE active`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (usecase.Domain, error) {
		var d usecase.Domain
		err := r.Scan(&d.Hostname, &d.AppID)
		return d, err
	})
}
