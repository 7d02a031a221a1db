package usecase

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
)

// planChanged is the event announcing a's plan.
func planChanged(a accounts.Account) (*billingv1.AccountPlanChanged, error) {
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

// LimitsMessage is the bus form of a plan's limits, in events and in answers alike.
func LimitsMessage(l catalog.Limits) *billingv1.PlanLimits {
	return &billingv1.PlanLimits{
		Apps:                   l.Apps,
		CustomDomains:          l.CustomDomains,
		ConcurrentDeploys:      l.ConcurrentDeploys,
		UploadBytes:            l.UploadBytes,
		DatabaseBytes:          l.DatabaseBytes,
		DatabaseConnections:    l.DatabaseConnections,
		BuildMinutes:           l.BuildMinutes,
		MinScale:               l.MinScale,
		Cpu:                    l.CPU,
		LogRetentionDays:       l.LogRetentionDays,
		ProcessTypes:           l.ProcessTypes,
		InstancesPerProcess:    l.InstancesPerProcess,
		InstancesTotal:         l.InstancesTotal,
		CronJobs:               l.CronJobs,
		CronMinIntervalMinutes: l.CronMinIntervalMinutes,
		CronTimeoutSeconds:     l.CronTimeoutSeconds,
		InstanceMemoryBytes:    l.InstanceMemoryBytes,
		Members:                l.Members,
		AuditRetentionDays:     l.AuditRetentionDays,
		Previews:               l.Previews,
		PreviewMaxTtlHours:     l.PreviewMaxTTLHours,
		Drains:                 l.Drains,
		MetricsRetentionDays:   l.MetricsRetentionDays,
	}
}
