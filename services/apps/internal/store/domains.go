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

const domainColumns = `d.id::text, d.app_id::text, d.hostname, d.status, d.token, d.created_at, d.activated_at,
d.pending_since, d.missing_since, d.next_check_at, coalesce(d.cert_status, ''), d.cert_expires_at, coalesce(d.cert_last_error, '')`

func scanDomain(row pgx.Row) (domains.Domain, error) {
	var d domains.Domain
	err := row.Scan(&d.ID, &d.AppID, &d.Hostname, &d.Status, &d.Token, &d.CreatedAt, &d.ActivatedAt,
		&d.PendingSince, &d.MissingSince, &d.NextCheckAt, &d.Certificate.Status, &d.Certificate.ExpiresAt, &d.Certificate.LastError)
	d.CreatedAt = d.CreatedAt.UTC()
	for _, t := range []*time.Time{d.ActivatedAt, d.PendingSince, d.MissingSince, d.NextCheckAt, d.Certificate.ExpiresAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
	return d, err
}

func collectDomains(rows pgx.Rows) ([]domains.Domain, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domains.Domain, error) { return scanDomain(r) })
}

// DomainClaim implements usecase.Tx.
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

// InsertDomain implements usecase.Tx.
func (r *repo) InsertDomain(ctx context.Context, d domains.Domain) error {
	_, err := r.q.Exec(ctx, `INSERT INTO domains (id, app_id, hostname, status, token, created_at, pending_since)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, d.ID, d.AppID, d.Hostname, d.Status, d.Token, d.CreatedAt, d.PendingSince)
	if pgstore.IsUniqueViolation(err, "domains_app_id_hostname_key") {
		return domains.ErrExists
	}
	if err != nil {
		return wrap("add domain", err)
	}
	return nil
}

// Domains implements usecase.Tx.
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

// DeleteDomain implements usecase.Tx.
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

// DeleteDomains implements usecase.Tx.
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

// DueForCheck implements usecase.Tx.
func (r *repo) DueForCheck(ctx context.Context, before time.Time, limit int) ([]domains.Domain, error) {
	rows, err := r.q.Query(ctx, `SELECT `+domainColumns+` FROM domains d JOIN apps a ON a.id = d.app_id
WHERE a.deleted_at IS NULL AND (d.next_check_at IS NULL OR d.next_check_at <= $1)
ORDER BY d.next_check_at NULLS FIRST, d.created_at LIMIT $2`, before, limit)
	if err != nil {
		return nil, wrap("due domains", err)
	}
	out, err := collectDomains(rows)
	if err != nil {
		return nil, wrap("due domains", err)
	}
	return out, nil
}

// SaveCheck implements usecase.Tx. The row changes only if it is still as the check read it
// (status and miss), so of two instances checking one hostname only one moves it and
// publishes; the unique index on active hostnames decides between two apps activating one
// hostname: the first commit wins.
func (r *repo) SaveCheck(ctx context.Context, was, now domains.Domain, at time.Time) (domains.Activation, bool, error) {
	var a domains.Activation
	err := r.q.QueryRow(ctx, `
UPDATE domains d SET status = $4, activated_at = $5, pending_since = $6, missing_since = $7,
       next_check_at = $8, last_checked_at = $9
  FROM apps a
 WHERE d.id = $1 AND d.status = $2 AND d.missing_since IS NOT DISTINCT FROM $3
   AND a.id = d.app_id AND a.deleted_at IS NULL
RETURNING d.app_id::text, a.account_id, a.slug, d.hostname`,
		was.ID, was.Status, was.MissingSince, now.Status, now.ActivatedAt, now.PendingSince, now.MissingSince, now.NextCheckAt, at,
	).Scan(&a.AppID, &a.AccountID, &a.Slug, &a.Hostname)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, false, nil // removed, deleted or changed by another check meanwhile
	}
	if pgstore.IsUniqueViolation(err, "domains_active_hostname") {
		return a, false, domains.ErrHostnameTaken
	}
	if err != nil {
		return a, false, wrap("save domain check", err)
	}
	return a, true, nil
}

// ExpireDomain implements usecase.Tx.
func (r *repo) ExpireDomain(ctx context.Context, d domains.Domain) (bool, error) {
	tag, err := r.q.Exec(ctx, `DELETE FROM domains WHERE id = $1 AND status = 'pending' AND pending_since = $2`, d.ID, d.PendingSince)
	if err != nil {
		return false, wrap("expire domain", err)
	}
	return tag.RowsAffected() == 1, nil
}

// SaveCertificate implements usecase.Tx. A report older than the one kept (by the zone's clock)
// changes nothing (false), so two edges' reports arriving in any order leave the newest.
func (r *repo) SaveCertificate(ctx context.Context, appID, zone, hostname string, c domains.Certificate, at time.Time) (domains.CertificateChange, bool, error) {
	var ch domains.CertificateChange
	err := r.q.QueryRow(ctx, `
WITH old AS (SELECT d.id, coalesce(d.cert_status, '') AS status FROM domains d
              WHERE d.app_id = $1 AND d.hostname = $2 FOR UPDATE)
UPDATE domains d SET cert_status = $3, cert_expires_at = $4, cert_last_error = nullif($5, ''), cert_changed_at = $6
  FROM old, apps a
 WHERE d.id = old.id AND a.id = d.app_id AND a.deleted_at IS NULL AND a.zone = $7
   AND (d.cert_changed_at IS NULL OR d.cert_changed_at < $6)
RETURNING old.status, a.account_id, a.slug`,
		appID, hostname, c.Status, c.ExpiresAt, c.LastError, at, zone).Scan(&ch.Previous, &ch.AccountID, &ch.Slug)
	if errors.Is(err, pgx.ErrNoRows) {
		return ch, false, nil // removed, deleted, or a newer report is kept
	}
	if err != nil {
		return ch, false, wrap("save certificate", err)
	}
	return ch, true, nil
}
