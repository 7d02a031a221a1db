// Package events is the deploys service's side of the bus: the events it consumes (apps'
// life, plan changes, zone progress) and the questions it asks other services.
package events

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/service"
	"tori.dev/services/deploys/internal/store"
)

// Routing keys and queues the deploys service consumes.
const (
	KeyAppCreated     = "apps.app.created"
	KeyAppDeleted     = "apps.app.deleted"
	KeyPlanChanged    = "billing.account.plan_changed"
	KeyDeployProgress = "zone.deploy.progressed"

	QueueApps        = "deploys.apps"
	QueuePlans       = "deploys.plans"
	QueueZoneReports = "deploys.zone_reports"
)

// Subscriptions are every durable consumer of the deploys service.
func Subscriptions(svc *service.Service) []bus.Subscription {
	return []bus.Subscription{
		{Queue: QueueApps, Keys: []string{KeyAppCreated, KeyAppDeleted}, Handle: appsHandler(svc)},
		{Queue: QueuePlans, Keys: []string{KeyPlanChanged}, Handle: plansHandler(svc)},
		{Queue: QueueZoneReports, Keys: []string{KeyDeployProgress}, Handle: progressHandler(svc)},
	}
}

func appsHandler(svc *service.Service) bus.TxHandler {
	return func(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
		switch d.RoutingKey {
		case KeyAppCreated:
			var ev appsv1.AppCreated
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			app := service.App{ID: ev.GetAppId(), AccountID: ev.GetAccountId(), Slug: ev.GetSlug(), Kind: ev.GetKind(), Zone: ev.GetZone()}
			if app.ID == "" || app.AccountID == "" {
				return bus.Permanent(fmt.Errorf("app.created without ids"))
			}
			if app.Zone == "" {
				app.Zone = "local"
			}
			return svc.OnAppCreated(ctx, store.WithTx(tx), app, ev.GetCreatedAt().AsTime())
		case KeyAppDeleted:
			var ev appsv1.AppDeleted
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			return svc.OnAppDeleted(ctx, store.WithTx(tx), ev.GetAppId())
		}
		return nil
	}
}

func plansHandler(svc *service.Service) bus.TxHandler {
	return func(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
		var ev billingv1.AccountPlanChanged
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		return svc.SavePlan(ctx, store.WithTx(tx), ev.GetAccountId(), planFrom(ev.GetPlan(), ev.GetLimits(), ev.GetVersion()))
	}
}

func progressHandler(svc *service.Service) bus.TxHandler {
	return func(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
		var ev zonev1.DeployProgress
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		return svc.OnProgress(ctx, store.WithTx(tx), &ev)
	}
}

func planFrom(name string, l *billingv1.PlanLimits, version int64) service.Plan {
	return service.Plan{
		Name: name, ConcurrentDeploys: l.GetConcurrentDeploys(), UploadBytes: l.GetUploadBytes(),
		BuildMinutes: l.GetBuildMinutes(), MinScale: l.GetMinScale(), CPU: l.GetCpu(), Version: version,
	}
}
