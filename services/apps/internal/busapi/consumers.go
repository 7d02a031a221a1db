// Package busapi is the apps service on the bus: the consumers that keep its copy of account
// facts, follow each app's deploys and collect cleanup confirmations; the request/reply
// responders for environment snapshots; and the client that asks billing for a plan.
package busapi

import (
	"log/slog"

	"tori.dev/pkg/bus"
	"tori.dev/services/apps/internal/usecase"
)

// The durable queues this service consumes from.
const (
	QueueAccounts  = "apps.accounts"
	QueueCleanup   = "apps.cleanup"
	QueueRevisions = "apps.revisions"
)

// cleanupKey is the confirmation service publishes once a deleted app is gone from it.
func cleanupKey(service string) string { return service + ".app.cleaned" }

// Consumers turn messages into use cases, each in the consumer's transaction.
type Consumers struct {
	// Tx binds the consumer's transaction to the store, so an effect commits with the record
	// that its message was processed.
	Tx  func(tx bus.Tx) usecase.Tx
	Log *slog.Logger
	// CleanupFrom are the services whose <service>.app.cleaned a deleted app awaits
	// (APPS_CLEANUP_SERVICES): each key is bound by name, since the broker lets no one bind a
	// key that starts with a wildcard.
	CleanupFrom []string
}

// Subscriptions are every durable subscription of the service, by name.
func (c Consumers) Subscriptions() map[string]bus.Subscription {
	subs := map[string]bus.Subscription{
		"accounts consumer":     c.Accounts(),
		"revisions consumer":    c.Revisions(),
		"certificates consumer": c.Certificates(),
	}
	if len(c.CleanupFrom) > 0 {
		subs["cleanup consumer"] = c.Cleanup()
	}
	return subs
}
