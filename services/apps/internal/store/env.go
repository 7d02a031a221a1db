package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/apps/internal/env"
)

// LockEnv implements usecase.Tx. A transaction-scoped advisory lock keyed by the app serialises
// writers of its variables (two puts at the cap cannot both pass), without touching the app
// row, whose share lock a delete in flight waits on.
func (r *repo) LockEnv(ctx context.Context, appID, key string) (int64, bool, error) {
	if _, err := r.q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('apps.env:' || $1::text, 0))`, appID); err != nil {
		return 0, false, wrap("lock env", err)
	}
	var (
		n   int64
		has bool
	)
	err := r.q.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(key = $2), false) FROM env_vars WHERE app_id = $1`, appID, key).Scan(&n, &has)
	if err != nil {
		return 0, false, wrap("count env", err)
	}
	return n, has, nil
}

// LockEnvKeys implements usecase.Tx, under the same lock as LockEnv.
func (r *repo) LockEnvKeys(ctx context.Context, appID string) (map[string]bool, error) {
	if _, err := r.q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('apps.env:' || $1::text, 0))`, appID); err != nil {
		return nil, wrap("lock env", err)
	}
	rows, err := r.q.Query(ctx, `SELECT key FROM env_vars WHERE app_id = $1`, appID)
	if err != nil {
		return nil, wrap("env keys", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap("env keys", err)
	}
	held := make(map[string]bool, len(keys))
	for _, k := range keys {
		held[k] = true
	}
	return held, nil
}

// UpsertVar implements usecase.Tx. xmax is 0 on a freshly inserted row version: the one way to
// tell insert from update in a single upsert.
func (r *repo) UpsertVar(ctx context.Context, appID string, v env.Sealed) (bool, error) {
	var created bool
	err := r.q.QueryRow(ctx, `
INSERT INTO env_vars (app_id, key, ciphertext, key_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (app_id, key) DO UPDATE
   SET ciphertext = EXCLUDED.ciphertext, key_id = EXCLUDED.key_id, updated_at = EXCLUDED.updated_at
RETURNING xmax = 0`, appID, v.Key, v.Ciphertext, v.KeyID, v.CreatedAt, v.UpdatedAt).Scan(&created)
	if err != nil {
		return false, wrap("put env", err)
	}
	return created, nil
}

// DeleteVars implements usecase.Tx.
func (r *repo) DeleteVars(ctx context.Context, appID string) error {
	if _, err := r.q.Exec(ctx, `DELETE FROM env_vars WHERE app_id = $1`, appID); err != nil {
		return wrap("delete env", err)
	}
	return nil
}

// Vars implements usecase.Tx.
func (r *repo) Vars(ctx context.Context, appID string) ([]env.Sealed, error) {
	rows, err := r.q.Query(ctx, `SELECT key, ciphertext, key_id, created_at, updated_at
FROM env_vars WHERE app_id = $1 ORDER BY key COLLATE "C"`, appID)
	if err != nil {
		return nil, fmt.Errorf("store: env: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (env.Sealed, error) {
		var v env.Sealed
		err := r.Scan(&v.Key, &v.Ciphertext, &v.KeyID, &v.CreatedAt, &v.UpdatedAt)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: env: %w", err)
	}
	return out, nil
}

// DeleteVar implements usecase.Tx.
func (r *repo) DeleteVar(ctx context.Context, appID, key string) error {
	tag, err := r.q.Exec(ctx, `DELETE FROM env_vars WHERE app_id = $1 AND key = $2`, appID, key)
	if err != nil {
		return fmt.Errorf("store: delete env: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return env.ErrNotSet
	}
	return nil
}

// UsedKeys implements usecase.RotationStore.
func (s *Store) UsedKeys(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT key_id, count(*) FROM env_vars GROUP BY key_id`)
	if err != nil {
		return nil, fmt.Errorf("store: used keys: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// VarsNotUnder implements usecase.RotationStore.
func (s *Store) VarsNotUnder(ctx context.Context, keyID, afterApp, afterKey string, limit int) ([]env.StoredVar, error) {
	if afterApp == "" {
		afterApp = "00000000-0000-0000-0000-000000000000"
	}
	rows, err := s.pool.Query(ctx, `SELECT app_id::text, key, ciphertext, key_id, created_at, updated_at
FROM env_vars WHERE key_id <> $1 AND (app_id, key COLLATE "C") > ($2::uuid, $3 COLLATE "C")
ORDER BY app_id, key COLLATE "C" LIMIT $4`, keyID, afterApp, afterKey, limit)
	if err != nil {
		return nil, fmt.Errorf("store: vars to re-encrypt: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (env.StoredVar, error) {
		var v env.StoredVar
		err := r.Scan(&v.AppID, &v.Key, &v.Ciphertext, &v.KeyID, &v.CreatedAt, &v.UpdatedAt)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: vars to re-encrypt: %w", err)
	}
	return out, nil
}

// ReplaceCiphertext implements usecase.RotationStore.
func (s *Store) ReplaceCiphertext(ctx context.Context, v env.StoredVar, ciphertext []byte, keyID string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE env_vars SET ciphertext = $3, key_id = $4
WHERE app_id = $1 AND key = $2 AND ciphertext = $5`, v.AppID, v.Key, ciphertext, keyID, v.Ciphertext)
	if err != nil {
		return false, fmt.Errorf("store: re-encrypt: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
