package busapi

import (
	"context"
	"fmt"
	"time"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// AppsLookup asks the apps service for an app with the one app client.
type AppsLookup struct {
	Client appsbus.AppClient
}

// LookupApp implements usecase.AppSource. Its errors wrap both deploy.ErrAppUnavailable and
// appsbus.ErrAppUnavailable.
func (l AppsLookup) LookupApp(ctx context.Context, accountID, slug string) (usecase.App, time.Time, bool, error) {
	m, err := l.Client.Lookup(ctx, accountID, slug)
	if err != nil {
		return usecase.App{}, time.Time{}, false, fmt.Errorf("%w: %w", deploy.ErrAppUnavailable, err)
	}
	if m == nil {
		return usecase.App{}, time.Time{}, false, nil
	}
	return appFromCreated(m), m.GetCreatedAt().AsTime(), true, nil
}

// appFromCreated is the copy apps.app.created (or the lookup's answer in its words) makes.
func appFromCreated(m *appsv1.AppCreated) usecase.App {
	a := usecase.App{ID: m.GetAppId(), AccountID: m.GetAccountId(), Slug: m.GetSlug(), Kind: m.GetKind(), Zone: m.GetZone()}
	if a.Zone == "" {
		a.Zone = "local"
	}
	return a
}
