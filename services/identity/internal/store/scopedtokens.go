package store

import (
	"context"
	"time"

	"tori.dev/contract/access"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/usecase"
)

// membershipSelect reads a membership with its team.
const membershipSelect = `SELECT t.id::text, t.slug, m.role, t.personal
	FROM teams t JOIN memberships m ON m.team_id = t.id `

func scanMembership(row interface{ Scan(...any) error }) (access.Membership, error) {
	var m access.Membership
	var role string
	err := row.Scan(&m.TeamID, &m.Slug, &role, &m.Personal)
	m.Role, _ = access.ParseRole(role)
	return m, err
}

func (r *repo) MemberTeam(ctx context.Context, userID, slug string) (access.Membership, error) {
	m, err := scanMembership(r.q.QueryRow(ctx, membershipSelect+`
		WHERE m.user_id = $1 AND (($2 = '' AND t.personal) OR ($2 <> '' AND t.slug = $2))`, userID, slug))
	return m, notFound(err, auth.ErrNotFound)
}

func (r *repo) MemberRole(ctx context.Context, teamID, userID string) (access.Membership, error) {
	m, err := scanMembership(r.q.QueryRow(ctx, membershipSelect+`WHERE m.team_id = $1 AND m.user_id = $2`, teamID, userID))
	return m, notFound(err, auth.ErrNotFound)
}

func (r *repo) TeamAppsAmong(ctx context.Context, teamID string, slugs []string) ([]string, error) {
	rows, err := r.q.Query(ctx, `SELECT slug FROM team_apps WHERE team_id = $1 AND slug = ANY($2) ORDER BY slug`, teamID, slugs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (r *repo) APIToken(ctx context.Context, id string) (auth.APIToken, error) {
	t, err := scanToken(r.q.QueryRow(ctx, `SELECT `+tokenColumns+tokenFrom+`WHERE k.id = $1`, id))
	return t, notFound(err, auth.ErrNotFound)
}

func (r *repo) TeamTokens(ctx context.Context, teamID string) ([]usecase.TeamToken, error) {
	rows, err := r.q.Query(ctx, `SELECT `+tokenColumns+`, u.email`+tokenFrom+`JOIN users u ON u.id = k.user_id
		WHERE k.team_id = $1 AND k.revoked_at IS NULL ORDER BY k.created_at, k.id`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []usecase.TeamToken{}
	for rows.Next() {
		var t usecase.TeamToken
		err := rows.Scan(&t.ID, &t.Hash, &t.AccountID, &t.UserID, &t.Name, &t.Prefix, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt,
			&t.TeamID, &t.TeamSlug, &t.Scope, &t.Apps, &t.ExpiresAt, &t.Email)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (r *repo) RevokeTeamToken(ctx context.Context, teamID, id string, at time.Time) (auth.APIToken, error) {
	var t auth.APIToken
	err := r.q.QueryRow(ctx, `UPDATE api_tokens SET revoked_at = $3
		WHERE id = $1 AND team_id = $2 AND revoked_at IS NULL RETURNING id::text, account_id::text, user_id::text`,
		id, teamID, at).Scan(&t.ID, &t.AccountID, &t.UserID)
	return t, notFound(err, auth.ErrNotFound)
}
