package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MigrationSet is a named folder of migrations: files named "NNN_description.sql", applied in
// name order, each once, each in its own transaction.
type MigrationSet struct {
	Name string // e.g. "bus" or "identity"; recorded with each applied file
	FS   fs.FS  // the folder's files at its root
}

// EmbeddedMigrations is the set of the .sql files in the folder "migrations" of files, the
// way every service embeds its own (`//go:embed migrations/*.sql`).
func EmbeddedMigrations(name string, files fs.FS) MigrationSet {
	sub, err := fs.Sub(files, "migrations")
	if err != nil {
		panic(fmt.Sprintf("pgstore: migrations of %s: %v", name, err)) // only for a path that is not valid
	}
	return MigrationSet{Name: name, FS: sub}
}

type migration struct {
	set, name, sql string
}

// checksum identifies a migration's text, so an applied file that is later edited is noticed
// instead of silently skipped.
func (m migration) checksum() string {
	sum := sha256.Sum256([]byte(m.sql))
	return hex.EncodeToString(sum[:])
}

// ErrMigrationChanged means a migration already applied no longer has the text it was applied
// with. A service stops at start on it: what the schema holds and what the code expects differ.
var ErrMigrationChanged = errors.New("pgstore: an applied migration was changed")

func (m MigrationSet) load() ([]migration, error) {
	entries, err := fs.ReadDir(m.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("pgstore: read migrations %s: %w", m.Name, err)
	}
	var out []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := fs.ReadFile(m.FS, e.Name())
		if err != nil {
			return nil, fmt.Errorf("pgstore: read %s/%s: %w", m.Name, e.Name(), err)
		}
		out = append(out, migration{set: m.Name, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// Migrate applies every set's pending migrations in the pool's own schema. It holds an
// advisory lock keyed by the schema for the whole run, so copies of a service starting at the
// same moment apply each migration once.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, sets ...MigrationSet) error {
	var all []migration
	for _, s := range sets {
		ms, err := s.load()
		if err != nil {
			return err
		}
		all = append(all, ms...)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: acquire: %w", err)
	}
	defer conn.Release()
	lockKey := "tori.migrate." + schema
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, lockKey); err != nil {
		return fmt.Errorf("pgstore: migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1))`, lockKey)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		set_name   text NOT NULL,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (set_name, name))`); err != nil {
		return fmt.Errorf("pgstore: migrations table: %w", err)
	}
	// Rows applied before checksums were kept get the current text's on first sight.
	if _, err := conn.Exec(ctx, `ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text`); err != nil {
		return fmt.Errorf("pgstore: migrations checksum column: %w", err)
	}
	for _, m := range all {
		err := InTx(ctx, conn, func(tx pgx.Tx) error {
			sum := m.checksum()
			tag, err := tx.Exec(ctx, `INSERT INTO schema_migrations (set_name, name, checksum) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, m.set, m.name, sum)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				_, err = tx.Exec(ctx, m.sql)
				return err
			}
			var applied *string
			if err := tx.QueryRow(ctx, `SELECT checksum FROM schema_migrations WHERE set_name = $1 AND name = $2`, m.set, m.name).Scan(&applied); err != nil {
				return err
			}
			if applied == nil {
				_, err := tx.Exec(ctx, `UPDATE schema_migrations SET checksum = $3 WHERE set_name = $1 AND name = $2`, m.set, m.name, sum)
				return err
			}
			if *applied != sum {
				return fmt.Errorf("%w: %s/%s was applied with checksum %s and now reads %s; restore its text and put the change in a new migration",
					ErrMigrationChanged, m.set, m.name, (*applied)[:12], sum[:12])
			}
			return nil
		})
		if errors.Is(err, ErrMigrationChanged) {
			return err
		}
		if err != nil {
			return fmt.Errorf("pgstore: migration %s/%s: %w", m.set, m.name, err)
		}
	}
	return nil
}

// Fingerprint is a digest of the sets' contents. Tests key their template databases by it,
// so a changed migration builds a fresh template.
func Fingerprint(sets ...MigrationSet) (string, error) {
	h := sha256.New()
	for _, s := range sets {
		ms, err := s.load()
		if err != nil {
			return "", err
		}
		for _, m := range ms {
			fmt.Fprintf(h, "%s/%s\n%s\n", m.set, m.name, m.sql)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
