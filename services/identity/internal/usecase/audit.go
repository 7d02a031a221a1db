package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	"tori.dev/services/identity/internal/audit"
)

// AuditPruner deletes what each team's plan no longer keeps (part of Store).
type AuditPruner interface {
	// PruneAuditEntries deletes the entries older than their team's retention at now
	// (defaultDays for a team whose plan identity does not hold), and says how many.
	PruneAuditEntries(ctx context.Context, now time.Time, defaultDays int) (int64, error)
}

// AuditLog reads a team's log, newest first: one page and the cursor of the next (""
// after the last). The gate has checked the caller is an admin of the team.
func (s *Service) AuditLog(ctx context.Context, q audit.Query) ([]audit.Entry, string, error) {
	days, err := s.store.AuditRetentionDays(ctx, q.TeamID)
	if err != nil {
		return nil, "", err
	}
	q, err = q.Window(days, s.now())
	if err != nil {
		return nil, "", err
	}
	limit := q.Limit
	q.Limit++ // one more tells whether another page follows
	entries, err := s.store.AuditEntries(ctx, q)
	if err != nil {
		return nil, "", err
	}
	if len(entries) <= limit {
		return entries, "", nil
	}
	entries = entries[:limit]
	last := entries[limit-1]
	return entries, audit.Cursor{At: last.At, ID: last.ID}.String(), nil
}

// PruneAudit deletes the entries past each team's retention; a periodic job.
func (s *Service) PruneAudit(ctx context.Context) (int64, error) {
	return s.store.PruneAuditEntries(ctx, s.now(), audit.DefaultRetentionDays)
}

// ErrInvalidEntry: an audit entry another service published that can never be recorded.
var ErrInvalidEntry = errors.New("usecase: invalid audit entry")

// RecordAuditEntry keeps an entry another service published (<service>.audit.recorded) in
// the consumer's transaction, once by its id.
func RecordAuditEntry(ctx context.Context, tx Repo, e *auditv1.EntryRecorded) error {
	if err := validEntry(e); err != nil {
		return err
	}
	return tx.RecordAudit(ctx, e)
}

func validEntry(e *auditv1.EntryRecorded) error {
	switch {
	case uuid.Validate(e.GetEntryId()) != nil, uuid.Validate(e.GetTeamId()) != nil:
		return fmt.Errorf("%w: entry or team id", ErrInvalidEntry)
	case e.GetAt() == nil || !e.GetAt().IsValid():
		return fmt.Errorf("%w: no time", ErrInvalidEntry)
	case e.GetAction() == "":
		return fmt.Errorf("%w: no action", ErrInvalidEntry)
	case e.GetOutcome() != auditbus.OutcomeSuccess && e.GetOutcome() != auditbus.OutcomeDenied:
		return fmt.Errorf("%w: outcome %q", ErrInvalidEntry, e.GetOutcome())
	}
	switch e.GetActorType() {
	case auditbus.ActorUser, auditbus.ActorToken, auditbus.ActorSystem:
	default:
		return fmt.Errorf("%w: actor type %q", ErrInvalidEntry, e.GetActorType())
	}
	for _, id := range []string{e.GetUserId(), e.GetTokenId()} {
		if id != "" && uuid.Validate(id) != nil {
			return fmt.Errorf("%w: actor id", ErrInvalidEntry)
		}
	}
	return nil
}
