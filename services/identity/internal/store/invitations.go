package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/contract/access"
	"tori.dev/services/identity/internal/team"
)

func (r *repo) CreateInvitation(ctx context.Context, inv team.Invitation) error {
	_, err := r.q.Exec(ctx, `INSERT INTO invitations (id, team_id, email, role, code_hash, invited_by, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		inv.ID, inv.TeamID, inv.Email, inv.Role.String(), inv.Hash, inv.InvitedBy, inv.CreatedAt, inv.ExpiresAt)
	return err
}

const invitationColumns = `id::text, team_id::text, email, role, code_hash, invited_by::text, created_at, expires_at, accepted_at, revoked_at`

func scanInvitation(row pgx.Row) (team.Invitation, error) {
	var i team.Invitation
	var role string
	err := row.Scan(&i.ID, &i.TeamID, &i.Email, &role, &i.Hash, &i.InvitedBy, &i.CreatedAt, &i.ExpiresAt, &i.AcceptedAt, &i.RevokedAt)
	i.Role, _ = access.ParseRole(role)
	return i, err
}

func (r *repo) PendingInvitations(ctx context.Context, teamID string, now time.Time) ([]team.Invitation, error) {
	rows, err := r.q.Query(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE team_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2
		ORDER BY created_at, id`, teamID, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []team.Invitation{}
	for rows.Next() {
		i, err := scanInvitation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

func (r *repo) RevokeInvitation(ctx context.Context, teamID, id string, at time.Time) error {
	tag, err := r.q.Exec(ctx, `UPDATE invitations SET revoked_at = $3
		WHERE id = $1 AND team_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $3`, id, teamID, at)
	if err == nil && tag.RowsAffected() == 0 {
		return team.ErrNotFound
	}
	return err
}

func (r *repo) RevokeInvitationsTo(ctx context.Context, teamID, email string, at time.Time) error {
	_, err := r.q.Exec(ctx, `UPDATE invitations SET revoked_at = $3
		WHERE team_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL`, teamID, email, at)
	return err
}

func (r *repo) LockInvitation(ctx context.Context, hash []byte) (team.Invitation, error) {
	i, err := scanInvitation(r.q.QueryRow(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE code_hash = $1 FOR UPDATE`, hash))
	return i, notFound(err, team.ErrNotFound)
}

func (r *repo) SaveInvitation(ctx context.Context, inv team.Invitation) error {
	_, err := r.q.Exec(ctx, `UPDATE invitations SET accepted_at = $2, revoked_at = $3 WHERE id = $1`, inv.ID, inv.AcceptedAt, inv.RevokedAt)
	return err
}
