package busapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"tori.dev/pkg/bus"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	"tori.dev/services/identity/internal/usecase"
)

// AuditQueue is identity's own durable queue for every service's audit entries.
const AuditQueue = "identity.audit"

// AuditConsumer records the entries apps, billing, databases, deploys and logs publish
// through their outboxes into the teams' audit log.
type AuditConsumer struct {
	// Repo binds the consumer's transaction to the store, so the entry commits with the
	// record that the message was processed.
	Repo func(tx bus.Tx) usecase.Repo
	Log  *slog.Logger
}

// Subscription binds one queue to every publisher's key.
func (ac AuditConsumer) Subscription() bus.Subscription {
	keys := make([]string, 0, len(auditbus.Publishers))
	for _, s := range auditbus.Publishers {
		keys = append(keys, auditbus.Key(s))
	}
	return bus.Subscription{Queue: AuditQueue, Keys: keys, Handle: ac.Handle}
}

// Handle records the entry once (a redelivery finds its id taken and adds nothing). An entry
// that can never be recorded is dead-lettered at once.
func (ac AuditConsumer) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var e auditv1.EntryRecorded
	if err := d.Decode(&e); err != nil {
		return bus.Permanent(fmt.Errorf("decode audit entry: %w", err))
	}
	err := usecase.RecordAuditEntry(ctx, ac.Repo(tx), &e)
	if errors.Is(err, usecase.ErrInvalidEntry) {
		return bus.Permanent(fmt.Errorf("audit entry %s from %s: %w", d.ID, d.Publisher, err))
	}
	return err
}
