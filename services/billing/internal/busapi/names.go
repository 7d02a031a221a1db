// Package busapi connects billing's use cases to the bus: the consumer of identity's
// account.created, the responder to billingbus.QueueAccountPlan, and the outbox flush of the
// operator command.
package busapi

// AccountsQueue is billing's own durable queue of account facts from identity.
const AccountsQueue = "billing.accounts"

// TeamsQueue is billing's own durable queue of team facts from identity.
const TeamsQueue = "billing.teams"
