package store

import (
	"context"
	"time"

	"tori.dev/services/identity/internal/auth"
)

func (r *repo) CreateAPIToken(ctx context.Context, t auth.APIToken) error {
	var teamID, scope *string
	if t.Scoped() {
		teamID, scope = &t.TeamID, &t.Scope
	}
	_, err := r.q.Exec(ctx, `INSERT INTO api_tokens (id, token_hash, account_id, user_id, name, prefix, created_at,
			team_id, scope, apps, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		t.ID, t.Hash, t.AccountID, t.UserID, t.Name, t.Prefix, t.CreatedAt, teamID, scope, t.Apps, t.ExpiresAt)
	return err
}

// tokenColumns and tokenFrom read a token with its team's slug (scoped tokens only).
const (
	tokenColumns = `k.id::text, k.token_hash, k.account_id::text, k.user_id::text, k.name, k.prefix, k.created_at,
		k.last_used_at, k.revoked_at, coalesce(k.team_id::text, ''), coalesce(t.slug, ''), coalesce(k.scope, ''), k.apps, k.expires_at`
	tokenFrom = ` FROM api_tokens k LEFT JOIN teams t ON t.id = k.team_id `
)

func scanToken(row interface{ Scan(...any) error }) (auth.APIToken, error) {
	var t auth.APIToken
	err := row.Scan(&t.ID, &t.Hash, &t.AccountID, &t.UserID, &t.Name, &t.Prefix, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt,
		&t.TeamID, &t.TeamSlug, &t.Scope, &t.Apps, &t.ExpiresAt)
	return t, err
}

func (r *repo) APITokenByHash(ctx context.Context, hash []byte) (auth.APIToken, error) {
	t, err := scanToken(r.q.QueryRow(ctx, `SELECT `+tokenColumns+tokenFrom+`WHERE k.token_hash = $1`, hash))
	return t, notFound(err, auth.ErrNotFound)
}

func (r *repo) TouchAPIToken(ctx context.Context, id string, at time.Time) error {
	_, err := r.q.Exec(ctx, `UPDATE api_tokens SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`,
		id, at, at.Add(-auth.LastUsedResolution))
	return err
}

// CountActiveAPITokens leaves out scoped tokens past their end: they no longer act, and a CI
// minting a short-lived token per run must not fill the account's cap with them.
func (r *repo) CountActiveAPITokens(ctx context.Context, accountID string) (int, error) {
	var n int
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM api_tokens
		WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`, accountID).Scan(&n)
	return n, err
}

func (r *repo) ListAPITokens(ctx context.Context, accountID string) ([]auth.APIToken, error) {
	rows, err := r.q.Query(ctx, `SELECT `+tokenColumns+tokenFrom+`
		WHERE k.account_id = $1 AND k.revoked_at IS NULL ORDER BY k.created_at, k.id`, accountID)
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
