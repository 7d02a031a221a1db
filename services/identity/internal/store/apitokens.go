package store

import (
	"context"
	"time"

	"tori.dev/services/identity/internal/auth"
)

func (r *repo) CreateAPIToken(ctx context.Context, t auth.APIToken) error {
	_, err := r.q.Exec(ctx, `INSERT INTO api_tokens (id, token_hash, account_id, user_id, name, prefix, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, t.ID, t.Hash, t.AccountID, t.UserID, t.Name, t.Prefix, t.CreatedAt)
	return err
}

const tokenColumns = `id::text, token_hash, account_id::text, user_id::text, name, prefix, created_at, last_used_at, revoked_at`

func scanToken(row interface{ Scan(...any) error }) (auth.APIToken, error) {
	var t auth.APIToken
	err := row.Scan(&t.ID, &t.Hash, &t.AccountID, &t.UserID, &t.Name, &t.Prefix, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt)
	return t, err
}

func (r *repo) APITokenByHash(ctx context.Context, hash []byte) (auth.APIToken, error) {
	t, err := scanToken(r.q.QueryRow(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE token_hash = $1`, hash))
	return t, notFound(err, auth.ErrNotFound)
}

func (r *repo) TouchAPIToken(ctx context.Context, id string, at time.Time) error {
	_, err := r.q.Exec(ctx, `UPDATE api_tokens SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`,
		id, at, at.Add(-auth.LastUsedResolution))
	return err
}

func (r *repo) CountActiveAPITokens(ctx context.Context, accountID string) (int, error) {
	var n int
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM api_tokens WHERE account_id = $1 AND revoked_at IS NULL`, accountID).Scan(&n)
	return n, err
}

func (r *repo) ListAPITokens(ctx context.Context, accountID string) ([]auth.APIToken, error) {
	rows, err := r.q.Query(ctx, `SELECT `+tokenColumns+` FROM api_tokens
		WHERE account_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []auth.APIToken{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (r *repo) RevokeAPIToken(ctx context.Context, accountID, id string, at time.Time) error {
	tag, err := r.q.Exec(ctx, `UPDATE api_tokens SET revoked_at = $3
		WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL`, id, accountID, at)
	if err == nil && tag.RowsAffected() == 0 {
		return auth.ErrNotFound
	}
	return err
}
