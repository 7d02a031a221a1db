package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	auditv1 "tori.dev/proto/gen/tori/audit/v1"
)

// WriteAuditEntry records e in the audit log inside tx, filling the actor's email from its
// user (the entry carries ids only). It is identity's accessgate.Writer: identity keeps the
// log, so its own entries go straight in, in the transaction of the change they record. An
// entry already recorded (a redelivery) is left as it is.
func WriteAuditEntry(ctx context.Context, tx pgx.Tx, e *auditv1.EntryRecorded) error {
	return writeAudit(ctx, tx, e)
}

func (r *repo) RecordAudit(ctx context.Context, e *auditv1.EntryRecorded) error {
	if r.tx == nil {
		return errOutsideTx
	}
	return writeAudit(ctx, r.tx, e)
}

func writeAudit(ctx context.Context, q querier, e *auditv1.EntryRecorded) error {
	meta := e.GetMetadata()
	if meta == nil {
		meta = map[string]string{}
	}
	_, err := q.Exec(ctx, `INSERT INTO audit_entries
		(id, team_id, at, actor_type, user_id, email, token_id, action, target, app, ip, outcome, metadata)
		VALUES ($1, $2, $3, $4, nullif($5::text, '')::uuid,
			coalesce((SELECT email FROM users WHERE id = nullif($5::text, '')::uuid), ''),
			nullif($6::text, '')::uuid, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (id) DO NOTHING`,
		e.GetEntryId(), e.GetTeamId(), e.GetAt().AsTime(), e.GetActorType(), e.GetUserId(), e.GetTokenId(),
		e.GetAction(), e.GetTarget(), e.GetApp(), e.GetIp(), e.GetOutcome(), meta)
	return err
}
