package store

import (
	"context"
	"fmt"
	"time"
)

// CountUploads implements usecase.Tx: the account's uploads under way at now.
func (t *txStore) CountUploads(ctx context.Context, accountID string, now time.Time) (int64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM uploads WHERE account_id = $1 AND until > $2`, accountID, now).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count uploads: %w", err)
	}
	return n, nil
}

// InsertUpload implements usecase.Tx.
func (t *txStore) InsertUpload(ctx context.Context, id, accountID string, until time.Time) error {
	if _, err := t.tx.Exec(ctx, `INSERT INTO uploads (id, account_id, until) VALUES ($1, $2, $3)`, id, accountID, until); err != nil {
		return fmt.Errorf("store: insert upload: %w", err)
	}
	return nil
}

// DeleteUpload implements usecase.Tx: the upload became a deploy (or nothing).
func (t *txStore) DeleteUpload(ctx context.Context, id string) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM uploads WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: delete upload: %w", err)
	}
	return nil
}

// DeleteUpload implements usecase.Store: an upload refused or failed gives its slot back.
func (s *Store) DeleteUpload(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM uploads WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: delete upload: %w", err)
	}
	return nil
}

// PruneUploads implements usecase.Store: rows past their time, left by a process that died.
func (s *Store) PruneUploads(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM uploads WHERE until <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("store: prune uploads: %w", err)
	}
	return tag.RowsAffected(), nil
}
