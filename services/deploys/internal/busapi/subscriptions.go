// Package busapi is the deploys service's side of the bus: the events it consumes (apps'
// life, plan changes, zone progress) and the questions it asks other services.
package busapi

import (
	"context"
	"fmt"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// The deploys service's own durable queues.
const (
	QueueApps        = "deploys.apps"
	QueuePlans       = "deploys.plans"
	QueueZoneReports = "deploys.zone_reports"
)

// BindTx makes a consumer's transaction the use cases' Tx, so what a message changes commits
// with the record that it was processed; the store provides it (store.Bind).
type BindTx func(tx bus.Tx) usecase.Tx

// Subscriptions are every durable consumer of the deploys service.
func Subscriptions(svc *usecase.Service, bind BindTx) []bus.Subscription {
	return []bus.Subscription{
		// Batched, as the logs service's copy of the apps: creates come in bursts.
		{Queue: QueueApps, Keys: []string{appsbus.KeyAppCreated, appsbus.KeyAppDeleted}, Handle: appsHandler(svc, bind), Batch: true},
		{Queue: QueuePlans, Keys: []string{billingbus.KeyPlanChanged}, Handle: plansHandler(svc, bind)},
		{Queue: QueueHolds, Keys: []string{billingbus.KeyHoldChanged}, Handle: holdsHandler(svc, bind)},
		{Queue: QueueZoneReports, Keys: []string{zonebus.KeyDeployProgressed}, Handle: progressHandler(svc, bind)},
		{Queue: QueueFormations, Keys: []string{zonebus.KeyFormationChanged}, Handle: formationHandler(svc, bind)},
	}
}

func appsHandler(svc *usecase.Service, bind BindTx) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		switch d.RoutingKey {
		case appsbus.KeyAppCreated:
			var ev appsv1.AppCreated
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			a := appFromCreated(&ev)
			if a.ID == "" || a.AccountID == "" {
				return bus.Permanent(fmt.Errorf("app.created without ids"))
			}
			return svc.OnAppCreated(ctx, bind(tx), a, ev.GetCreatedAt().AsTime())
		case appsbus.KeyAppDeleted:
			var ev appsv1.AppDeleted
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			return svc.OnAppDeleted(ctx, bind(tx), ev.GetAppId())
		}
		return nil
	}
}

func plansHandler(svc *usecase.Service, bind BindTx) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		var ev billingv1.AccountPlanChanged
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		return svc.SavePlan(ctx, bind(tx), ev.GetAccountId(), planFrom(ev.GetPlan(), ev.GetLimits(), ev.GetVersion()))
	}
}

func progressHandler(svc *usecase.Service, bind BindTx) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		var ev zonev1.DeployProgress
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		// The zone that published it, which the broker vouches for, not the one it names.
		if zone, ok := bus.ZoneOf(d.Publisher); ok {
			ev.Zone = zone
		}
		return svc.OnProgress(ctx, bind(tx), &ev)
	}
}

func planFrom(name string, l *billingv1.PlanLimits, version int64) usecase.Plan {
	return usecase.Plan{
		Name: name, ConcurrentDeploys: l.GetConcurrentDeploys(), UploadBytes: l.GetUploadBytes(),
		BuildMinutes: l.GetBuildMinutes(), MinScale: l.GetMinScale(), CPU: l.GetCpu(), Version: version,
		ProcessTypes: l.GetProcessTypes(), InstancesPerProcess: l.GetInstancesPerProcess(), InstancesTotal: l.GetInstancesTotal(),
		CronJobs: l.GetCronJobs(), CronMinIntervalMinutes: l.GetCronMinIntervalMinutes(), CronTimeoutSeconds: l.GetCronTimeoutSeconds(),
		InstanceMemoryBytes: l.GetInstanceMemoryBytes(), Previews: l.GetPreviews(), PreviewMaxTTLHours: l.GetPreviewMaxTtlHours(),
	}
}
