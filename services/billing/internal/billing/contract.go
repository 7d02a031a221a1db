package billing

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
)

// RoutingKeyPlanChanged is the event every plan change publishes.
const RoutingKeyPlanChanged = "billing.account.plan_changed"

// PlanChangedEvent is the bus message announcing a's plan.
func PlanChangedEvent(a accounts.Account) (*billingv1.AccountPlanChanged, error) {
	p, err := catalog.Lookup(string(a.Plan))
	if err != nil {
		return nil, err
	}
	return &billingv1.AccountPlanChanged{
		AccountId: a.ID.String(),
		Plan:      string(p.Name),
		Limits:    LimitsMessage(p.Limits),
		Version:   a.Version,
		ChangedAt: timestamppb.New(a.UpdatedAt),
	}, nil
}

// AccountPlanReply is the answer to billing.rpc.account_plan about a.
func AccountPlanReply(a accounts.Account) (*billingv1.AccountPlanReply, error) {
	p, err := catalog.Lookup(string(a.Plan))
	if err != nil {
		return nil, err
	}
	return &billingv1.AccountPlanReply{Plan: string(p.Name), Limits: LimitsMessage(p.Limits), Version: a.Version}, nil
}

// LimitsMessage is the bus form of a plan's limits.
func LimitsMessage(l catalog.Limits) *billingv1.PlanLimits {
	return &billingv1.PlanLimits{
		Apps:                l.Apps,
		CustomDomains:       l.CustomDomains,
		ConcurrentDeploys:   l.ConcurrentDeploys,
		UploadBytes:         l.UploadBytes,
		DatabaseBytes:       l.DatabaseBytes,
		DatabaseConnections: l.DatabaseConnections,
		BuildMinutes:        l.BuildMinutes,
		MinScale:            l.MinScale,
		Cpu:                 l.CPU,
		LogRetentionDays:    l.LogRetentionDays,
	}
}
