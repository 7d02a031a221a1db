package billingbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
)

// Requester sends one request and waits for its answer; *bus.Conn is one.
type Requester interface {
	Request(ctx context.Context, queue string, req, reply proto.Message) error
}

// ErrPlanUnavailable means billing could not say which plan an account is on (it is down,
// slow or answered nonsense). Whoever asked fails the work that needed the plan with 503
// service_unavailable rather than guess limits (docs/conventions.md, "An account's plan").
var ErrPlanUnavailable = errors.New("billing: account plan unavailable")

// PlanClient asks billing for an account's plan. A service asks only when it has no copy of
// the plan yet; it keeps the answer as its copy, ranked by Version against plan_changed events.
type PlanClient struct {
	Bus Requester
	// Timeout bounds one question when the context has no earlier deadline; zero leaves it to
	// the bus's request timeout.
	Timeout time.Duration
}

// AccountPlan returns billing's answer for accountID, or an error wrapping ErrPlanUnavailable.
func (c PlanClient) AccountPlan(ctx context.Context, accountID string) (*billingv1.AccountPlanReply, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	reply := &billingv1.AccountPlanReply{}
	if err := c.Bus.Request(ctx, QueueAccountPlan, &billingv1.AccountPlanRequest{AccountId: accountID}, reply); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPlanUnavailable, err)
	}
	if reply.GetPlan() == "" || reply.GetLimits() == nil {
		return nil, fmt.Errorf("%w: billing answered without a plan or limits", ErrPlanUnavailable)
	}
	return reply, nil
}
