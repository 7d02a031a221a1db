package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/domains"
)

const domainColumns = `d.id::text, d.app_id::text, d.hostname, d.status, d.token, d.created_at, d.activated_at`

func scanDomain(row pgx.Row) (domains.Domain, error) {
	var d domains.Domain
	err := row.Scan(&d.ID, &d.AppID, &d.Hostname, &d.Status, &d.Token, &d.CreatedAt, &d.ActivatedAt)
	d.CreatedAt = d.CreatedAt.UTC()
	return d, err
}

func collectDomains(rows pgx.Rows) ([]domains.Domain, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domains.Domain, error) { return scanDomain(r) })
}

// AddDomain implements domains.Store.
func (s *Store) AddDomain(ctx context.Context, app apps.App, hostname string, build domains.AddFunc) (domains.Domain, error) {
	var d domains.Domain
	err := pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		acct, err := lockAccount(ctx, tx, app.AccountID)
		if err != nil {
			return err
		}
		var live bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM apps WHERE id = $1 AND deleted_at IS NULL)`, app.ID).Scan(&live); err != nil {
			return err
		}
		if !live {
			return apps.ErrNotFound
		}
		c := domains.Claim{Account: acct}
		err = tx.QueryRow(ctx, `
SELECT (SELECT count(*) FROM domains d JOIN apps a ON a.id = d.app_id
         WHERE a.account_id = $1 AND a.deleted_at IS NULL),
       EXISTS (SELECT 1 FROM domains WHERE app_id = $2 AND hostname = $3),
       EXISTS (SELECT 1 FROM domains WHERE hostname = $3 AND status = 'active' AND app_id <> $2)`,
			app.AccountID, app.ID, hostname).Scan(&c.Used, &c.OnThisApp, &c.ActiveElsewhere)
		if err != nil {
			return err
		}
		if d, err = build(c); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO domains (id, app_id, hostname, status, token, created_at)
VALUES ($1, $2, $3, $4, $5, $6)`, d.ID, d.AppID, d.Hostname, d.Status, d.Token, d.CreatedAt)
		return err
	})
	switch {
	case pgstore.IsUniqueViolation(err, "domains_app_id_hostname_key"):
		return domains.Domain{}, domains.ErrExists
	case err != nil:
		return domains.Domain{}, wrap("add domain", err)
	}
	return d, nil
}

// Domains implements domains.Store.
func (s *Store) Domains(ctx context.Context, appID string) ([]domains.Domain, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.app_id = $1 ORDER BY d.created_at, d.hostname`, appID)
	if err != nil {
		return nil, fmt.Errorf("store: domains: %w", err)
	}
	out, err := collectDomains(rows)
	if err != nil {
		return nil, fmt.Errorf("store: domains: %w", err)
	}
	return out, nil
}

// RemoveDomain implements domains.Store.
func (s *Store) RemoveDomain(ctx context.Context, app apps.App, hostname string, at time.Time) error {
	err := pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var status string
		err := tx.QueryRow(ctx, `DELETE FROM domains WHERE app_id = $1 AND hostname = $2 RETURNING status`, app.ID, hostname).Scan(&status)
		if errors.Is(err, pgx.ErrNoRows) {
			return domains.ErrNotFound
		}
		if err != nil {
			return err
		}
		if status != domains.StatusActive {
			return nil // never served, so the edge has nothing to forget
		}
		return s.publish(ctx, tx, "apps.domain.removed", domainRemoved(app, hostname, at))
	})
	if err != nil {
		return wrap("remove domain", err)
	}
	return nil
}

// DueForCheck implements domains.CheckStore.
func (s *Store) DueForCheck(ctx context.Context, before time.Time, limit int) ([]domains.Domain, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+domainColumns+` FROM domains d JOIN apps a ON a.id = d.app_id
WHERE d.status = 'pending' AND a.deleted_at IS NULL AND (d.last_checked_at IS NULL OR d.last_checked_at < $1)
ORDER BY d.last_checked_at NULLS FIRST, d.created_at LIMIT $2`, before, limit)
	if err != nil {
		return nil, fmt.Errorf("store: due domains: %w", err)
	}
	out, err := collectDomains(rows)
	if err != nil {
		return nil, fmt.Errorf("store: due domains: %w", err)
	}
	return out, nil
}

// MarkChecked implements domains.CheckStore.
func (s *Store) MarkChecked(ctx context.Context, id string, at time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE domains SET last_checked_at = $2 WHERE id = $1`, id, at); err != nil {
		return fmt.Errorf("store: mark checked: %w", err)
	}
	return nil
}

var errLostRace = errors.New("store: hostname active elsewhere")

// Activate implements domains.CheckStore. The unique index on active hostnames decides
// between two apps that prove the same hostname: the first commit wins.
func (s *Store) Activate(ctx context.Context, id string, at time.Time) (bool, error) {
	activated := false
	err := pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var appID, accountID, slug, hostname string
		err := tx.QueryRow(ctx, `
UPDATE domains d SET status = 'active', activated_at = $2, last_checked_at = $2
  FROM apps a
 WHERE d.id = $1 AND d.status = 'pending' AND a.id = d.app_id AND a.deleted_at IS NULL
RETURNING d.app_id::text, a.account_id, a.slug, d.hostname`, id, at).Scan(&appID, &accountID, &slug, &hostname)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // removed, deleted or activated meanwhile
		}
		if pgstore.IsUniqueViolation(err, "domains_active_hostname") {
			return errLostRace
		}
		if err != nil {
			return err
		}
		activated = true
		return s.publish(ctx, tx, "apps.domain.activated", domainActivated(appID, accountID, slug, hostname, at))
	})
	if errors.Is(err, errLostRace) {
		return false, nil
	}
	if err != nil {
		return false, wrap("activate domain", err)
	}
	return activated, nil
}
