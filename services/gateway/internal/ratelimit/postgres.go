package ratelimit

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations creates the counters table in the gateway's schema.
var Migrations = pgstore.EmbeddedMigrations("gateway", migrationFiles)

// Postgres is a Limiter whose counters every gateway instance shares. Windows are computed
// from the database's clock, so instances whose clocks drift still agree on where a window
// starts, and one statement both counts and reads, so concurrent instances never lose a hit.
type Postgres struct {
	pool *pgxpool.Pool
}

// NewPostgres uses pool, connected as the gateway's role with its schema on the search path.
func NewPostgres(pool *pgxpool.Pool) *Postgres {
	return &Postgres{pool: pool}
}

// The window containing now(): floor(epoch / length) * length.
const windowCTE = `WITH w AS (
	SELECT to_timestamp(floor(extract(epoch FROM now())::float8 / $2::float8) * $2::float8) AS start)`

const hitSQL = windowCTE + `
INSERT INTO counters AS c (bucket, window_start, window_end, n)
SELECT $1, w.start, w.start + $2::float8 * interval '1 second', 1 FROM w
ON CONFLICT (bucket, window_start) DO UPDATE SET n = c.n + 1
RETURNING c.n, extract(epoch FROM c.window_end - now())::float8`

const peekSQL = windowCTE + `
SELECT coalesce((SELECT c.n FROM counters c WHERE c.bucket = $1 AND c.window_start = w.start), 0),
       extract(epoch FROM w.start + $2::float8 * interval '1 second' - now())::float8
FROM w`

// Hit implements Limiter.
func (p *Postgres) Hit(ctx context.Context, key string, window time.Duration) (Count, error) {
	return p.query(ctx, hitSQL, key, window)
}

// Peek implements Limiter.
func (p *Postgres) Peek(ctx context.Context, key string, window time.Duration) (Count, error) {
	return p.query(ctx, peekSQL, key, window)
}

func (p *Postgres) query(ctx context.Context, sql, key string, window time.Duration) (Count, error) {
	var (
		n    int64
		left float64
	)
	if err := p.pool.QueryRow(ctx, sql, key, window.Seconds()).Scan(&n, &left); err != nil {
		return Count{}, fmt.Errorf("ratelimit: %w", err)
	}
	return Count{N: n, ResetIn: time.Duration(left * float64(time.Second))}, nil
}

// Prune deletes counters of windows that ended more than a minute ago, returning how many.
func (p *Postgres) Prune(ctx context.Context) (int64, error) {
	tag, err := p.pool.Exec(ctx, `DELETE FROM counters WHERE window_end < now() - interval '1 minute'`)
	if err != nil {
		return 0, fmt.Errorf("ratelimit: prune: %w", err)
	}
	return tag.RowsAffected(), nil
}

// PruneEvery is how often ended windows are deleted. Every instance prunes; deleting the
// same ended windows twice is harmless.
const PruneEvery = time.Minute

// PruneJob prunes every PruneEvery.
func (p *Postgres) PruneJob() lifecycle.Job {
	return lifecycle.Job{Name: "prune rate-limit counters", Every: PruneEvery, Run: p.Prune}
}
