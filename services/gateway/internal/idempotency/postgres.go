package idempotency

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the keys table in the gateway's schema.
var Migrations = pgstore.EmbeddedMigrations("gateway_idempotency", migrationFiles)

// Postgres keeps records where every gateway instance sees them. Times come from the
// database's clock, so instances whose clocks drift agree on leases and on the 24 hours.
type Postgres struct {
	pool *pgxpool.Pool
}

// NewPostgres uses pool, connected as the gateway's role with its schema on the search path.
func NewPostgres(pool *pgxpool.Pool) *Postgres { return &Postgres{pool: pool} }

// claimSQL takes a new key, one whose holder's lease lapsed, or one past its TTL; a key held
// or done within its TTL returns no row.
const claimSQL = `
INSERT INTO idempotency_keys (key_hash, owner, state, lease_until)
VALUES ($1, $2, 'running', now() + $3::float8 * interval '1 second')
ON CONFLICT (key_hash) DO UPDATE
SET owner = EXCLUDED.owner, state = 'running', lease_until = EXCLUDED.lease_until, created_at = now(),
    request_hash = NULL, status = NULL, content_type = NULL, body = NULL, too_large = false
WHERE (idempotency_keys.state = 'running' AND idempotency_keys.lease_until < now())
   OR idempotency_keys.created_at < now() - $4::float8 * interval '1 second'
RETURNING true`

const readSQL = `
SELECT state = 'running', lease_until, request_hash, coalesce(status, 0), coalesce(content_type, ''), body, too_large
FROM idempotency_keys WHERE key_hash = $1`

// Claim implements Store.
func (p *Postgres) Claim(ctx context.Context, keyHash []byte, lease time.Duration) (Claim, bool, Record, error) {
	owner := make([]byte, 16)
	_, _ = rand.Read(owner)
	c := Claim{KeyHash: keyHash, Owner: owner}
	// The record may go between the two statements (its holder released it after a 5xx), so
	// the claim is tried again; three rounds cover any real interleaving.
	for range 3 {
		var took bool
		err := p.pool.QueryRow(ctx, claimSQL, keyHash, owner, lease.Seconds(), TTL.Seconds()).Scan(&took)
		if err == nil {
			return c, true, Record{}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Claim{}, false, Record{}, fmt.Errorf("idempotency: claim: %w", err)
		}
		var r Record
		err = p.pool.QueryRow(ctx, readSQL, keyHash).Scan(&r.Running, &r.LeaseUntil, &r.RequestHash, &r.Status, &r.ContentType, &r.Body, &r.TooLarge)
		if err == nil {
			return Claim{}, false, r, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Claim{}, false, Record{}, fmt.Errorf("idempotency: read: %w", err)
		}
	}
	return Claim{}, false, Record{}, errors.New("idempotency: claim: the key kept changing hands")
}

// Renew implements Store.
func (p *Postgres) Renew(ctx context.Context, c Claim, lease time.Duration) error {
	return p.held(p.pool.Exec(ctx, `UPDATE idempotency_keys SET lease_until = now() + $3::float8 * interval '1 second'
		WHERE key_hash = $1 AND owner = $2 AND state = 'running'`, c.KeyHash, c.Owner, lease.Seconds()))
}

// Finish implements Store.
func (p *Postgres) Finish(ctx context.Context, c Claim, a Answer) error {
	return p.held(p.pool.Exec(ctx, `UPDATE idempotency_keys
		SET state = 'done', request_hash = $3, status = $4, content_type = $5, body = $6, too_large = $7
		WHERE key_hash = $1 AND owner = $2 AND state = 'running'`,
		c.KeyHash, c.Owner, a.RequestHash, a.Status, a.ContentType, a.Body, a.TooLarge))
}

// Release implements Store.
func (p *Postgres) Release(ctx context.Context, c Claim) error {
	_, err := p.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE key_hash = $1 AND owner = $2 AND state = 'running'`, c.KeyHash, c.Owner)
	if err != nil {
		return fmt.Errorf("idempotency: release: %w", err)
	}
	return nil
}

// Prune implements Store: it deletes keys past their TTL.
func (p *Postgres) Prune(ctx context.Context) (int64, error) {
	tag, err := p.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < now() - $1::float8 * interval '1 second'`, TTL.Seconds())
	if err != nil {
		return 0, fmt.Errorf("idempotency: prune: %w", err)
	}
	return tag.RowsAffected(), nil
}

func (p *Postgres) held(tag interface{ RowsAffected() int64 }, err error) error {
	if err != nil {
		return fmt.Errorf("idempotency: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrLost
	}
	return nil
}

// PruneEvery is how often keys past their TTL are deleted.
const PruneEvery = 10 * time.Minute

// PruneJob prunes a store every PruneEvery.
func PruneJob(s Store) lifecycle.Job {
	return lifecycle.Job{Name: "prune idempotency keys", Every: PruneEvery, Run: s.Prune}
}
