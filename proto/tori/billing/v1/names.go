// Package billingbus names what the billing service publishes and answers on the bus. Each
// name is declared here once, beside its message in events.proto and rpc.proto; consumers and
// requesters import the constant.
package billingbus

// Events (routing keys on the events exchange).
const (
	KeyPlanChanged = "billing.account.plan_changed" // billingv1.AccountPlanChanged
	KeyHoldChanged = "billing.account.hold_changed" // billingv1.AccountHoldChanged
	KeyHoldNotice  = "billing.account.hold_notice"  // billingv1.AccountHoldNotice
)

// Requests (queues billing answers).
const (
	QueueAccountPlan = "billing.rpc.account_plan" // billingv1.AccountPlanRequest → AccountPlanReply
)
