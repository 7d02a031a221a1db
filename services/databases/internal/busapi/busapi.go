// Package busapi is the databases service's face on the bus: the clients of the apps
// service's app question and billing's plan question.
package busapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/databases/internal/database"
	"tori.dev/services/databases/internal/usecase"
)

// AppsLookup asks the apps service for an app with the one app client.
type AppsLookup struct {
	Client appsbus.AppClient
}

// LookupApp implements usecase.AppSource. Its errors wrap database.ErrAppUnavailable.
func (l AppsLookup) LookupApp(ctx context.Context, accountID, slug string) (usecase.App, bool, error) {
	m, err := l.Client.Lookup(ctx, accountID, slug)
	if err != nil {
		return usecase.App{}, false, fmt.Errorf("%w: %w", database.ErrAppUnavailable, err)
	}
	if m == nil {
		return usecase.App{}, false, nil
	}
	id, err := uuid.Parse(m.GetAppId())
	if err != nil {
		return usecase.App{}, false, fmt.Errorf("%w: app id %q: %w", database.ErrAppUnavailable, m.GetAppId(), err)
	}
	return usecase.App{ID: id.String(), AccountID: m.GetAccountId(), Slug: m.GetSlug(), Kind: m.GetKind(), Zone: m.GetZone()}, true, nil
}

// BillingPlans asks billing for an account's plan with the one plan client.
type BillingPlans struct {
	Client billingbus.PlanClient
}

// DatabaseLimits implements usecase.PlanSource. Its errors wrap database.ErrPlanUnavailable.
func (b BillingPlans) DatabaseLimits(ctx context.Context, accountID string) (database.Limits, error) {
	reply, err := b.Client.AccountPlan(ctx, accountID)
	if err != nil {
		return database.Limits{}, fmt.Errorf("%w: %w", database.ErrPlanUnavailable, err)
	}
	l := database.Limits{
		Connections: int(reply.GetLimits().GetDatabaseConnections()),
		MaxBytes:    reply.GetLimits().GetDatabaseBytes(),
		Version:     reply.GetVersion(),
	}
	if l.Connections < 1 || l.MaxBytes < 1 {
		return database.Limits{}, fmt.Errorf("%w: plan %q has no database limits", database.ErrPlanUnavailable, reply.GetPlan())
	}
	return l, nil
}
