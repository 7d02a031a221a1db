package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// SetAppAccount records the account an app belongs to.
func (t Tx) SetAppAccount(ctx context.Context, appID, accountID string) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO app_accounts (app_id, account_id) VALUES ($1, $2)
		ON CONFLICT (app_id) DO UPDATE SET account_id = EXCLUDED.account_id`, appID, accountID)
	return err
}

// AccountOf is the account an app belongs to ("" when the zone has not heard yet).
func (s *Store) AccountOf(ctx context.Context, appID string) (string, error) {
	var account string
	err := s.pool.QueryRow(ctx, `SELECT account_id FROM app_accounts WHERE app_id = $1`, appID).Scan(&account)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return account, err
}

// SaveHold keeps an account's hold (stopsFrom nil: none) unless a version as new is kept:
// billing's events arrive in any order.
func (t Tx) SaveHold(ctx context.Context, accountID string, stopsFrom *time.Time, version int64) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO account_holds AS h (account_id, serving_stops_from, version) VALUES ($1, $2, $3)
		ON CONFLICT (account_id) DO UPDATE SET serving_stops_from = EXCLUDED.serving_stops_from, version = EXCLUDED.version
		WHERE h.version < EXCLUDED.version`, accountID, stopsFrom, version)
	return err
}

// PausedApps maps each app whose account is under a hold to when its serving stops.
func (s *Store) PausedApps(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.pool.Query(ctx, `SELECT a.app_id, h.serving_stops_from FROM app_accounts a
		JOIN account_holds h USING (account_id) WHERE h.serving_stops_from IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var app string
		var from time.Time
		if err := rows.Scan(&app, &from); err != nil {
			return nil, err
		}
		out[app] = from
	}
	return out, rows.Err()
}
