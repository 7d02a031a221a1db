package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/identity/internal/audit"
)

func (r *repo) AuditEntries(ctx context.Context, q audit.Query) ([]audit.Entry, error) {
	var end, afterAt *time.Time
	var afterID *string
	if !q.End.IsZero() {
		end = &q.End
	}
	if q.After != nil {
		afterAt, afterID = &q.After.At, &q.After.ID
	}
	rows, err := r.q.Query(ctx, `SELECT id::text, team_id::text, at, actor_type, coalesce(user_id::text, ''), email,
			coalesce(token_id::text, ''), action, target, app, ip, outcome, metadata
		FROM audit_entries
		WHERE team_id = $1 AND at >= $2
			AND ($3::timestamptz IS NULL OR at < $3)
			AND ($4 = '' OR action = $4)
			AND ($5 = '' OR app = $5)
			AND ($6 = '' OR user_id::text = $6 OR token_id::text = $6 OR lower(email) = lower($6))
			AND ($7::timestamptz IS NULL OR (at, id) < ($7, $8::uuid))
		ORDER BY at DESC, id DESC
		LIMIT $9`,
		q.TeamID, q.Start, end, q.Action, q.App, q.Actor, afterAt, afterID, q.Limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []audit.Entry{}
	for rows.Next() {
		var e audit.Entry
		if err := rows.Scan(&e.ID, &e.TeamID, &e.At, &e.ActorType, &e.UserID, &e.Email, &e.TokenID, &e.Action,
			&e.Target, &e.App, &e.IP, &e.Outcome, &e.Metadata); err != nil {
			return nil, err
		}
		e.At = e.At.UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

func (r *repo) AuditRetentionDays(ctx context.Context, teamID string) (int, error) {
	var days int
	err := r.q.QueryRow(ctx, `SELECT audit_retention_days FROM account_plans WHERE account_id = $1`, teamID).Scan(&days)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return days, err
}

// PruneAuditEntries is the only delete the log allows: the append-only trigger lets a
// DELETE through only in a transaction that set tori.audit_prune.
func (s *Store) PruneAuditEntries(ctx context.Context, now time.Time, defaultDays int) (int64, error) {
	var n int64
	err := pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL tori.audit_prune = 'on'`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM audit_entries e
			WHERE e.at < $1::timestamptz - make_interval(days => coalesce(
				(SELECT nullif(p.audit_retention_days, 0)::int FROM account_plans p WHERE p.account_id = e.team_id), $2::int))`,
			now, defaultDays)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
