// Package busapi is the logs service's face on the bus: the consumers of log batches from
// the zones, the apps' lives from the apps service and plan changes from billing, and the
// client of billing's plan question. Each consumer runs its use case in the transaction in
// which the bus records the message as processed, so a redelivered message has no second
// effect.
package busapi

import (
	"tori.dev/pkg/bus"
	"tori.dev/services/logs/internal/usecase"
)

// The durable queues this service consumes from.
const (
	QueueIngest = "logs.ingest"
	QueueApps   = "logs.apps"
	QueuePlans  = "logs.plans"
)

// Transactions turns the transaction the bus opened for a message into the use cases' Tx;
// *store.Store is one.
type Transactions interface {
	Bind(tx bus.Tx) usecase.Tx
}
