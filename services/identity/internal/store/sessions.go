package store

import (
	"context"
	"time"

	"tori.dev/services/identity/internal/auth"
)

func (r *repo) CreateSession(ctx context.Context, s auth.Session) error {
	_, err := r.q.Exec(ctx, `INSERT INTO sessions (id, token_hash, account_id, user_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, s.ID, s.Hash, s.AccountID, s.UserID, s.CreatedAt, s.ExpiresAt)
	return err
}

func (r *repo) SessionByHash(ctx context.Context, hash []byte) (auth.Session, error) {
	var s auth.Session
	err := r.q.QueryRow(ctx, `SELECT id::text, token_hash, account_id::text, user_id::text, created_at, expires_at, revoked_at
		FROM sessions WHERE token_hash = $1`, hash).
		Scan(&s.ID, &s.Hash, &s.AccountID, &s.UserID, &s.CreatedAt, &s.ExpiresAt, &s.RevokedAt)
	return s, notFound(err, auth.ErrNotFound)
}

func (r *repo) RevokeSession(ctx context.Context, accountID, id string, at time.Time) (bool, error) {
	tag, err := r.q.Exec(ctx, `UPDATE sessions SET revoked_at = $3
		WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL`, id, accountID, at)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}
