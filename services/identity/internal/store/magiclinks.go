package store

import (
	"context"
	"time"

	"tori.dev/services/identity/internal/auth"
)

func (r *repo) CreateMagicLink(ctx context.Context, m auth.MagicLink) error {
	_, err := r.q.Exec(ctx, `INSERT INTO magic_links (code_hash, email, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		m.Hash, m.Email, m.CreatedAt, m.ExpiresAt)
	return err
}

func (r *repo) CountMagicLinksSince(ctx context.Context, email string, since time.Time) (int, error) {
	var n int
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM magic_links WHERE email = $1 AND created_at > $2`, email, since).Scan(&n)
	return n, err
}

func (r *repo) LockMagicLink(ctx context.Context, hash []byte) (auth.MagicLink, error) {
	var m auth.MagicLink
	err := r.q.QueryRow(ctx, `SELECT code_hash, email, created_at, expires_at, used_at FROM magic_links
		WHERE code_hash = $1 FOR UPDATE`, hash).Scan(&m.Hash, &m.Email, &m.CreatedAt, &m.ExpiresAt, &m.UsedAt)
	return m, notFound(err, auth.ErrNotFound)
}

func (r *repo) SaveMagicLink(ctx context.Context, m auth.MagicLink) error {
	_, err := r.q.Exec(ctx, `UPDATE magic_links SET used_at = $2 WHERE code_hash = $1`, m.Hash, m.UsedAt)
	return err
}
