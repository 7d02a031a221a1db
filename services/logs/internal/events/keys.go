// Package events holds the logs service's bus consumers: log batches from the zones, the
// apps' lives from the apps service and plan changes from billing. Each handler runs in the
// transaction in which the bus records the message as processed, so a redelivered message has
// no second effect.
package events

// Routing keys and durable queues this service consumes.
const (
	KeyLogBatch    = "zone.logs.batch"
	KeyAppCreated  = "apps.app.created"
	KeyAppDeleted  = "apps.app.deleted"
	KeyPlanChanged = "billing.account.plan_changed"

	QueueIngest = "logs.ingest"
	QueueApps   = "logs.apps"
	QueuePlans  = "logs.plans"
)
