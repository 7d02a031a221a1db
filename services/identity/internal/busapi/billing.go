package busapi

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/identity/internal/account"
)

// Requester is the part of *bus.Conn the billing client needs.
type Requester interface {
	Request(ctx context.Context, queue string, req, reply proto.Message) error
}

// BillingClient asks billing for an account's plan by request/reply.
type BillingClient struct{ Bus Requester }

// AccountPlan implements app.PlanSource.
func (b BillingClient) AccountPlan(ctx context.Context, accountID string) (account.Plan, error) {
	var reply billingv1.AccountPlanReply
	if err := b.Bus.Request(ctx, AccountPlanQueue, &billingv1.AccountPlanRequest{AccountId: accountID}, &reply); err != nil {
		return account.Plan{}, err
	}
	if reply.GetPlan() == "" {
		return account.Plan{}, errors.New("billing answered without a plan")
	}
	return planFrom(reply.GetPlan(), reply.GetLimits(), reply.GetVersion()), nil
}

var _ Requester = (*bus.Conn)(nil)
