package callerid

import (
	"context"
	"embed"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations create the shared nonce table in a service's own schema; a service running
// several replicas lists them with its own and calls ShareReplays.
var Migrations = pgstore.EmbeddedMigrations("callerid", migrationFiles)

// SharedNonces remembers the nonces of state-changing requests in the service's Postgres,
// which every replica of it shares: a request captured inside the cluster and sent to another
// replica within the window is refused there too. Reads (GET, HEAD) and the gateway's
// /internal calls (the token check, which changes nothing) stay with each process's own
// memory: sent again, they only answer again what the sender could already read.
type SharedNonces struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewSharedNonces keeps nonces in pool's database (migrated with Migrations).
func NewSharedNonces(pool *pgxpool.Pool) *SharedNonces {
	return &SharedNonces{pool: pool, now: time.Now}
}

// pruneOneIn is how often a claim also deletes rows past their time: a few rows a request
// on average, kept off the path of most requests.
const pruneOneIn = 512

// Claim records nonce, of a signature made at signed, for every replica: ErrReplay when it
// was claimed before within its window, ErrNoncesFull (answered 503) when the database
// cannot be asked.
func (s *SharedNonces) Claim(ctx context.Context, nonce string, signed time.Time) error {
	now := s.now()
	until := signed.Add(MaxSkew + time.Second)
	tag, err := s.pool.Exec(ctx, `INSERT INTO callerid_nonces (nonce, until) VALUES ($1, $2)
		ON CONFLICT (nonce) DO UPDATE SET until = EXCLUDED.until WHERE callerid_nonces.until <= $3`,
		strings.Clone(nonce), until, now)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoncesFull, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrReplay
	}
	if rand.IntN(pruneOneIn) == 0 {
		_, _ = s.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM callerid_nonces WHERE until <= $1`, now)
	}
	return nil
}

// shared is the process's shared store, when ShareReplays set one.
var shared atomic.Pointer[SharedNonces]

// ShareReplays makes every Middleware of the process claim the nonces of state-changing
// requests in s too (after its own memory), so replay protection holds across replicas. The
// function it returns puts back the store it replaced, unless another replaced s since (tests
// run several services' serve in one process).
func ShareReplays(s *SharedNonces) (restore func()) {
	prev := shared.Swap(s)
	return func() { shared.CompareAndSwap(s, prev) }
}

// needsSharedClaim reports whether a request's nonce is claimed across replicas: every
// method that changes something, but the gateway's /internal calls.
func needsSharedClaim(method, path string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS":
		return false
	}
	return !strings.HasPrefix(path, "/internal/")
}
