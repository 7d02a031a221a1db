// Package events connects billing's use cases to the bus: the consumer of identity's
// account.created and the responder to billing.rpc.account_plan.
package events

const (
	// AccountsQueue is billing's durable queue of account facts from identity.
	AccountsQueue = "billing.accounts"
	// KeyAccountCreated is identity's event for a new account.
	KeyAccountCreated = "identity.account.created"
	// AccountPlanQueue is the request queue other services ask an account's plan on.
	AccountPlanQueue = "billing.rpc.account_plan"
)
