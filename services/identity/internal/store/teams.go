package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/contract/access"
	"tori.dev/services/identity/internal/team"
	"tori.dev/services/identity/internal/usecase"
)

func (r *repo) CreateTeam(ctx context.Context, t team.Team) (bool, error) {
	tag, err := r.q.Exec(ctx, `INSERT INTO teams (id, slug, name, personal, owner_account_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (slug) DO NOTHING`,
		t.ID, t.Slug, t.Name, t.Personal, t.OwnerAccountID, t.CreatedAt)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

const teamColumns = `t.id::text, t.slug, t.name, t.personal, t.owner_account_id::text, t.created_at`

func scanTeam(row pgx.Row) (team.Team, error) {
	var t team.Team
	err := row.Scan(&t.ID, &t.Slug, &t.Name, &t.Personal, &t.OwnerAccountID, &t.CreatedAt)
	return t, notFound(err, team.ErrNotFound)
}

func (r *repo) Team(ctx context.Context, id string) (team.Team, error) {
	return scanTeam(r.q.QueryRow(ctx, `SELECT `+teamColumns+` FROM teams t WHERE t.id = $1`, id))
}

func (r *repo) LockTeam(ctx context.Context, id string) (team.Team, error) {
	return scanTeam(r.q.QueryRow(ctx, `SELECT `+teamColumns+` FROM teams t WHERE t.id = $1 FOR UPDATE`, id))
}

func (r *repo) RenameTeam(ctx context.Context, id, name string) error {
	tag, err := r.q.Exec(ctx, `UPDATE teams SET name = $2 WHERE id = $1`, id, name)
	if err == nil && tag.RowsAffected() == 0 {
		return team.ErrNotFound
	}
	return err
}

func (r *repo) DeleteTeam(ctx context.Context, id string) error {
	// Tokens go with the team (ON DELETE CASCADE), as do memberships and invitations.
	tag, err := r.q.Exec(ctx, `DELETE FROM teams WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		return team.ErrNotFound
	}
	return err
}

// viewSelect is a team with one member's role and the team's plan (nestling until billing's
// copy arrives).
const viewSelect = `SELECT ` + teamColumns + `, m.role, coalesce(p.plan, 'nestling')
	FROM memberships m JOIN teams t ON t.id = m.team_id
	LEFT JOIN account_plans p ON p.account_id = t.id`

func scanView(row pgx.Row) (team.View, error) {
	var v team.View
	var role string
	err := row.Scan(&v.ID, &v.Slug, &v.Name, &v.Personal, &v.OwnerAccountID, &v.CreatedAt, &role, &v.Plan)
	v.Role, _ = access.ParseRole(role)
	return v, err
}

func (r *repo) TeamOf(ctx context.Context, teamID, userID string) (team.View, error) {
	v, err := scanView(r.q.QueryRow(ctx, viewSelect+` WHERE m.team_id = $1 AND m.user_id = $2`, teamID, userID))
	return v, notFound(err, team.ErrNotFound)
}

func (r *repo) TeamsOf(ctx context.Context, userID string) ([]team.View, error) {
	rows, err := r.q.Query(ctx, viewSelect+` WHERE m.user_id = $1 ORDER BY t.personal DESC, t.slug`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []team.View{}
	for rows.Next() {
		v, err := scanView(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// MembershipsOf is what introspection gives the gateway to sign into X-Tori-Teams.
func (r *repo) MembershipsOf(ctx context.Context, userID string) ([]access.Membership, error) {
	views, err := r.TeamsOf(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]access.Membership, 0, len(views))
	for _, v := range views {
		out = append(out, access.Membership{TeamID: v.ID, Slug: v.Slug, Role: v.Role, Personal: v.Personal})
	}
	return out, nil
}

func (r *repo) CountOwnedNestlingTeams(ctx context.Context, userID string) (int, error) {
	var n int
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM memberships m JOIN teams t ON t.id = m.team_id
		LEFT JOIN account_plans p ON p.account_id = t.id
		WHERE m.user_id = $1 AND m.role = 'owner' AND NOT t.personal AND coalesce(p.plan, 'nestling') = 'nestling'`,
		userID).Scan(&n)
	return n, err
}

func (r *repo) TeamHasApps(ctx context.Context, teamID string) (bool, error) {
	var has bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM team_apps WHERE team_id = $1)`, teamID).Scan(&has)
	return has, err
}

func (r *repo) AddMember(ctx context.Context, teamID, userID string, role access.Role, at time.Time) error {
	_, err := r.q.Exec(ctx, `INSERT INTO memberships (team_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)`,
		teamID, userID, role.String(), at)
	return err
}

const memberSelect = `SELECT m.team_id::text, m.user_id::text, u.account_id::text, u.email, u.name, m.role, m.created_at
	FROM memberships m JOIN users u ON u.id = m.user_id`

func scanMember(row pgx.Row) (team.Member, error) {
	var m team.Member
	var role string
	err := row.Scan(&m.TeamID, &m.UserID, &m.AccountID, &m.Email, &m.Name, &role, &m.CreatedAt)
	m.Role, _ = access.ParseRole(role)
	return m, err
}

func (r *repo) Member(ctx context.Context, teamID, userID string) (team.Member, error) {
	m, err := scanMember(r.q.QueryRow(ctx, memberSelect+` WHERE m.team_id = $1 AND m.user_id = $2`, teamID, userID))
	return m, notFound(err, team.ErrNotFound)
}

func (r *repo) Members(ctx context.Context, teamID string) ([]team.Member, error) {
	rows, err := r.q.Query(ctx, memberSelect+` WHERE m.team_id = $1 ORDER BY m.created_at, m.user_id`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []team.Member{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func (r *repo) CountOwners(ctx context.Context, teamID string) (int, error) {
	var n int
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM memberships WHERE team_id = $1 AND role = 'owner'`, teamID).Scan(&n)
	return n, err
}

// OwnerEmails are the addresses of a team's owners, oldest membership first.
func (r *repo) OwnerEmails(ctx context.Context, teamID string) ([]string, error) {
	rows, err := r.q.Query(ctx, `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.team_id = $1 AND m.role = 'owner' ORDER BY m.created_at, u.email`, teamID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (r *repo) SetRole(ctx context.Context, teamID, userID string, role access.Role) error {
	tag, err := r.q.Exec(ctx, `UPDATE memberships SET role = $3 WHERE team_id = $1 AND user_id = $2`, teamID, userID, role.String())
	if err == nil && tag.RowsAffected() == 0 {
		return team.ErrNotFound
	}
	return err
}

func (r *repo) RemoveMember(ctx context.Context, teamID, userID string) error {
	tag, err := r.q.Exec(ctx, `DELETE FROM memberships WHERE team_id = $1 AND user_id = $2`, teamID, userID)
	if err == nil && tag.RowsAffected() == 0 {
		return team.ErrNotFound
	}
	return err
}

func (r *repo) RevokeMemberTokens(ctx context.Context, teamID, userID string, at time.Time) ([]usecase.RevokedToken, error) {
	return r.revokeTokens(ctx, `UPDATE api_tokens SET revoked_at = $3
		WHERE team_id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id::text, account_id::text`, teamID, userID, at)
}

func (r *repo) RevokeTeamTokens(ctx context.Context, teamID string, at time.Time) ([]usecase.RevokedToken, error) {
	return r.revokeTokens(ctx, `UPDATE api_tokens SET revoked_at = $2
		WHERE team_id = $1 AND revoked_at IS NULL RETURNING id::text, account_id::text`, teamID, at)
}

func (r *repo) revokeTokens(ctx context.Context, sql string, args ...any) ([]usecase.RevokedToken, error) {
	rows, err := r.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []usecase.RevokedToken
	for rows.Next() {
		var t usecase.RevokedToken
		if err := rows.Scan(&t.ID, &t.AccountID); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (r *repo) PutTeamApp(ctx context.Context, appID, teamID, slug string) error {
	_, err := r.q.Exec(ctx, `INSERT INTO team_apps (app_id, team_id, slug) VALUES ($1, $2, $3)
		ON CONFLICT (app_id) DO NOTHING`, appID, teamID, slug)
	return err
}

func (r *repo) DeleteTeamApp(ctx context.Context, appID string) error {
	_, err := r.q.Exec(ctx, `DELETE FROM team_apps WHERE app_id = $1`, appID)
	return err
}
