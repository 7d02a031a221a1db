package busapi

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/usecase"
)

// PlanReader answers which plan an account is on; *usecase.Service is one.
type PlanReader interface {
	AccountPlan(ctx context.Context, id uuid.UUID) (accounts.Account, error)
}

// Codes a requester of billingbus.QueueAccountPlan can receive in a *bus.RemoteError.
const (
	CodeInvalidRequest   = "invalid_request"
	CodeInvalidAccountID = "invalid_account_id"
)

// AccountPlanResponder answers billingbus.QueueAccountPlan with the account's plan, limits
// and version. An account billing has not recorded yet is answered as nestling at version 0.
func AccountPlanResponder(r PlanReader) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req billingv1.AccountPlanRequest
		err := d.Decode(&req)
		if errors.Is(err, bus.ErrInvalidID) {
			return nil, bus.Reject(CodeInvalidAccountID, "account_id must be a UUID")
		}
		if err != nil {
			return nil, bus.Reject(CodeInvalidRequest, "the body is not an AccountPlanRequest")
		}
		id, err := accounts.ParseID(req.GetAccountId())
		if err != nil {
			return nil, bus.Reject(CodeInvalidAccountID, "account_id must be a UUID")
		}
		a, err := r.AccountPlan(ctx, id)
		if err != nil {
			return nil, err
		}
		return accountPlanReply(a)
	}
}

func accountPlanReply(a accounts.Account) (*billingv1.AccountPlanReply, error) {
	p, err := catalog.Lookup(string(a.Plan))
	if err != nil {
		return nil, err
	}
	return &billingv1.AccountPlanReply{Plan: string(p.Name), Limits: usecase.LimitsMessage(p.Limits), Version: a.Version}, nil
}
