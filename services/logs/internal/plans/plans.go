// Package plans answers how many days of logs an account keeps: from the service's own copy
// of the account's plan, else by asking billing, else the free plan's retention.
package plans

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/protobuf/proto"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/logs/internal/store"
)

// QueueAccountPlan is billing's request queue for an account's current plan.
const QueueAccountPlan = "billing.rpc.account_plan"

// Requester asks a question over the bus; *bus.Conn is one.
type Requester interface {
	Request(ctx context.Context, queue string, req, reply proto.Message) error
}

// Source implements logs.Plans.
type Source struct {
	store       *store.Store
	billing     Requester // nil: never ask
	timeout     time.Duration
	defaultDays int
	log         *slog.Logger
}

// NewSource builds a Source. defaultDays applies to an account with no plan on record that
// billing does not answer for in time: every account starts on the free plan, so its
// retention is the right guess, and it errs on the side of showing less.
func NewSource(st *store.Store, billing Requester, timeout time.Duration, defaultDays int, log *slog.Logger) *Source {
	return &Source{store: st, billing: billing, timeout: timeout, defaultDays: defaultDays, log: log}
}

// RetentionDays implements logs.Plans.
func (s *Source) RetentionDays(ctx context.Context, accountID string) (int, error) {
	days, ok, err := s.store.RetentionDays(ctx, accountID)
	if err != nil || ok {
		return days, err
	}
	if s.billing == nil {
		return s.defaultDays, nil
	}
	if days, ok := s.ask(ctx, accountID); ok {
		return days, nil
	}
	return s.defaultDays, nil
}

// ask requests the plan from billing and keeps the answer as the account's copy; its version
// ranks it against plan_changed events like any other copy.
func (s *Source) ask(ctx context.Context, accountID string) (int, bool) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var reply billingv1.AccountPlanReply
	if err := s.billing.Request(ctx, QueueAccountPlan, &billingv1.AccountPlanRequest{AccountId: accountID}, &reply); err != nil {
		s.log.WarnContext(ctx, "billing did not answer the plan; using the default retention", "account_id", accountID, "err", err.Error())
		return 0, false
	}
	days := int(reply.GetLimits().GetLogRetentionDays())
	if days <= 0 {
		return 0, false
	}
	err := s.store.SavePlan(context.WithoutCancel(ctx), s.store.Pool(), store.Plan{
		AccountID: accountID, Name: reply.GetPlan(), RetentionDays: days, Version: reply.GetVersion(),
	})
	if err != nil {
		s.log.WarnContext(ctx, "keeping billing's plan answer failed", "account_id", accountID, "err", err.Error())
	}
	return days, true
}
