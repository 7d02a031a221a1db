package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

type migration struct {
	set, name, sql string
}

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
	for _, m := range all {
		err := InTx(ctx, conn, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO schema_migrations (set_name, name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, m.set, m.name)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return nil // applied before
			}
			_, err = tx.Exec(ctx, m.sql)
			return err
		})
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
