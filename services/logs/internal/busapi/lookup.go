package busapi

import (
	"context"
	"fmt"
	"time"

	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/logs/internal/logs"
)

// AppsLookup asks the apps service for an app with the one app client.
type AppsLookup struct {
	Client appsbus.AppClient
}

// LookupApp implements usecase.AppSource. Its errors wrap both logs.ErrAppUnavailable and
// appsbus.ErrAppUnavailable.
func (l AppsLookup) LookupApp(ctx context.Context, accountID, slug string) (logs.App, time.Time, bool, error) {
	m, err := l.Client.Lookup(ctx, accountID, slug)
	if err != nil {
		return logs.App{}, time.Time{}, false, fmt.Errorf("%w: %w", logs.ErrAppUnavailable, err)
	}
	if m == nil {
		return logs.App{}, time.Time{}, false, nil
	}
	a, err := appFrom(m.GetAppId(), m.GetAccountId(), m.GetSlug(), m.GetZone())
	if err != nil {
		return logs.App{}, time.Time{}, false, fmt.Errorf("%w: %w", logs.ErrAppUnavailable, err)
	}
	return a, timeOr(m.GetCreatedAt().AsTime(), m.GetCreatedAt() != nil, time.Now()), true, nil
}
