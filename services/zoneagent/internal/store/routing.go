package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/zoneagent/internal/revision"
)

// The edge's table follows each change of one app or one hostname (usecase/routing.go):
// these read that one's rows by key, never the whole record.

// LiveRoute is the app's live route, or ok false.
func (s *Store) LiveRoute(ctx context.Context, appID string) (revision.Route, bool, error) {
	var r revision.Route
	err := s.pool.QueryRow(ctx, `SELECT app_id, slug, deploy_id, kind FROM live WHERE app_id = $1`, appID).
		Scan(&r.AppID, &r.Slug, &r.DeployID, &r.Kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return revision.Route{}, false, nil
	}
	return r, err == nil, err
}

// HostOwner is the app an active custom hostname belongs to ("" when it is not active).
func (s *Store) HostOwner(ctx context.Context, hostname string) (string, error) {
	var app string
	err := s.pool.QueryRow(ctx, `SELECT app_id FROM domains WHERE hostname = $1 AND active`, strings.ToLower(hostname)).Scan(&app)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return app, err
}

// AppHold is when the app stops being served under its account's hold (nil: no hold).
func (s *Store) AppHold(ctx context.Context, appID string) (*time.Time, error) {
	var from *time.Time
	err := s.pool.QueryRow(ctx, `SELECT h.serving_stops_from FROM app_accounts a
		JOIN account_holds h USING (account_id) WHERE a.app_id = $1`, appID).Scan(&from)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return from, err
}

// AccountHold is the account's apps and when they stop being served (nil: no hold).
func (s *Store) AccountHold(ctx context.Context, accountID string) ([]string, *time.Time, error) {
	var from *time.Time
	err := s.pool.QueryRow(ctx, `SELECT serving_stops_from FROM account_holds WHERE account_id = $1`, accountID).Scan(&from)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT app_id FROM app_accounts WHERE account_id = $1`, accountID)
	if err != nil {
		return nil, nil, err
	}
	apps, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return apps, from, err
}
