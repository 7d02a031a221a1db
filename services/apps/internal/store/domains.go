package store

import (
	"context"
	"errors"
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

// DomainClaim implements app.Tx.
func (r *repo) DomainClaim(ctx context.Context, app apps.App, hostname string) (domains.Claim, error) {
	var c domains.Claim
	err := r.q.QueryRow(ctx, `
SELECT (SELECT count(*) FROM domains d JOIN apps a ON a.id = d.app_id
         WHERE a.account_id = $1 AND a.deleted_at IS NULL),
       EXISTS (SELECT 1 FROM domains WHERE app_id = $2 AND hostname = $3),
       EXISTS (SELECT 1 FROM domains WHERE hostname = $3 AND status = 'active' AND app_id <> $2)`,
		app.AccountID, app.ID, hostname).Scan(&c.Used, &c.OnThisApp, &c.ActiveElsewhere)
	if err != nil {
		return domains.Claim{}, wrap("domain claim", err)
	}
	return c, nil
}

// InsertDomain implements app.Tx.
func (r *repo) InsertDomain(ctx context.Context, d domains.Domain) error {
	_, err := r.q.Exec(ctx, `INSERT INTO domains (id, app_id, hostname, status, token, created_at)
VALUES ($1, $2, $3, $4, $5, $6)`, d.ID, d.AppID, d.Hostname, d.Status, d.Token, d.CreatedAt)
	if pgstore.IsUniqueViolation(err, "domains_app_id_hostname_key") {
		return domains.ErrExists
	}
	if err != nil {
		return wrap("add domain", err)
	}
	return nil
}

// Domains implements app.Tx.
func (r *repo) Domains(ctx context.Context, appID string) ([]domains.Domain, error) {
	rows, err := r.q.Query(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.app_id = $1 ORDER BY d.created_at, d.hostname`, appID)
	if err != nil {
		return nil, wrap("domains", err)
	}
	out, err := collectDomains(rows)
	if err != nil {
		return nil, wrap("domains", err)
	}
	return out, nil
}

// DeleteDomain implements app.Tx.
func (r *repo) DeleteDomain(ctx context.Context, appID, hostname string) (domains.Domain, error) {
	d := domains.Domain{AppID: appID, Hostname: hostname}
	err := r.q.QueryRow(ctx, `DELETE FROM domains WHERE app_id = $1 AND hostname = $2 RETURNING status`, appID, hostname).Scan(&d.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return domains.Domain{}, domains.ErrNotFound
	}
	if err != nil {
		return domains.Domain{}, wrap("remove domain", err)
	}
	return d, nil
}

// DeleteDomains implements app.Tx.
func (r *repo) DeleteDomains(ctx context.Context, appID string) ([]domains.Domain, error) {
	rows, err := r.q.Query(ctx, `DELETE FROM domains d WHERE d.app_id = $1 RETURNING `+domainColumns, appID)
	if err != nil {
		return nil, wrap("remove domains", err)
	}
	out, err := collectDomains(rows)
	if err != nil {
		return nil, wrap("remove domains", err)
	}
	return out, nil
}

// DueForCheck implements app.Tx.
func (r *repo) DueForCheck(ctx context.Context, before time.Time, limit int) ([]domains.Domain, error) {
	rows, err := r.q.Query(ctx, `SELECT `+domainColumns+` FROM domains d JOIN apps a ON a.id = d.app_id
WHERE d.status = 'pending' AND a.deleted_at IS NULL AND (d.last_checked_at IS NULL OR d.last_checked_at < $1)
ORDER BY d.last_checked_at NULLS FIRST, d.created_at LIMIT $2`, before, limit)
	if err != nil {
		return nil, wrap("due domains", err)
	}
	out, err := collectDomains(rows)
	if err != nil {
		return nil, wrap("due domains", err)
	}
	return out, nil
}

// MarkChecked implements app.Tx.
func (r *repo) MarkChecked(ctx context.Context, id string, at time.Time) error {
	if _, err := r.q.Exec(ctx, `UPDATE domains SET last_checked_at = $2 WHERE id = $1`, id, at); err != nil {
		return wrap("mark checked", err)
	}
	return nil
}

// ActivateDomain implements app.Tx. The unique index on active hostnames decides between two
// apps that prove the same hostname: the first commit wins.
func (r *repo) ActivateDomain(ctx context.Context, id string, at time.Time) (domains.Activation, bool, error) {
	var a domains.Activation
	err := r.q.QueryRow(ctx, `
UPDATE domains d SET status = 'active', activated_at = $2, last_checked_at = $2
  FROM apps a
 WHERE d.id = $1 AND d.status = 'pending' AND a.id = d.app_id AND a.deleted_at IS NULL
RETURNING d.app_id::text, a.account_id, a.slug, d.hostname`, id, at).Scan(&a.AppID, &a.AccountID, &a.Slug, &a.Hostname)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, false, nil // removed, deleted or activated meanwhile
	}
	if pgstore.IsUniqueViolation(err, "domains_active_hostname") {
		return a, false, domains.ErrHostnameTaken
	}
	if err != nil {
		return a, false, wrap("activate domain", err)
	}
	return a, true, nil
}
