// Package busapi is the apps service on the bus: the consumers that keep its copy of account
// facts, follow each app's deploys and collect cleanup confirmations; the request/reply
// responders for environment snapshots; and the client that asks billing for a plan.
package busapi

import (
	"log/slog"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	"tori.dev/services/apps/internal/app"
)

// The durable queues this service consumes from.
const (
	QueueAccounts  = "apps.accounts"
	QueueCleanup   = "apps.cleanup"
	QueueRevisions = "apps.revisions"
)

// KeyCleanupConfirmed matches every service's <service>.app.cleaned.
const KeyCleanupConfirmed = "*.app.cleaned"

// Consumers turn messages into use cases, each in the consumer's transaction.
type Consumers struct {
	// Tx binds the consumer's transaction to the store, so an effect commits with the record
	// that its message was processed.
	Tx  func(tx pgx.Tx) app.Tx
	Log *slog.Logger
}

// Subscriptions are every durable subscription of the service, by name.
func (c Consumers) Subscriptions() map[string]bus.Subscription {
	return map[string]bus.Subscription{
		"accounts consumer":  c.Accounts(),
		"cleanup consumer":   c.Cleanup(),
		"revisions consumer": c.Revisions(),
	}
}
