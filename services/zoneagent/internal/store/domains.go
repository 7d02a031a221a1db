package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/zoneagent/internal/app"
)

// SetDomain records an active hostname; a hostname moves to the app that activated it last.
func (t Tx) SetDomain(ctx context.Context, hostname, appID string) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO domains (hostname, app_id) VALUES ($1, $2)
		ON CONFLICT (hostname) DO UPDATE SET app_id = EXCLUDED.app_id`, strings.ToLower(hostname), appID)
	return err
}

// RemoveDomain forgets a hostname of an app (not one another app has claimed since).
func (t Tx) RemoveDomain(ctx context.Context, hostname, appID string) error {
	_, err := t.tx.Exec(ctx, `DELETE FROM domains WHERE hostname = $1 AND app_id = $2`, strings.ToLower(hostname), appID)
	return err
}

// Domains returns every active hostname.
func (s *Store) Domains(ctx context.Context) ([]app.Domain, error) {
	rows, err := s.pool.Query(ctx, `SELECT hostname, app_id FROM domains`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.Domain, error) {
		var d app.Domain
		err := r.Scan(&d.Hostname, &d.AppID)
		return d, err
	})
}
