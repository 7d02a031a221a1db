package usecase

import (
	"context"
	"errors"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/services/zoneagent/internal/revision"
)

// siteSweepEvery is how often the zone looks for site objects nothing serves any more.
const siteSweepEvery = 15 * time.Minute

// SiteSweepJob reclaims the objects of static revisions that will never serve again (retired,
// failed, discarded, or unknown to the zone) which their removal left behind: removal happens
// when a revision settles or its app is deleted, and a store out of reach at that moment
// would otherwise keep them for good. A zone without a site store has nothing to sweep.
func (a *Agent) SiteSweepJob() lifecycle.Job {
	return lifecycle.Job{Name: "reclaim site objects", Every: siteSweepEvery, Immediately: true, Run: a.sweepSites}
}

func (a *Agent) sweepSites(ctx context.Context) (int64, error) {
	if a.sites == nil {
		return 0, nil
	}
	type rev struct{ app, deploy string }
	var found []rev
	if err := a.sites.Revisions(ctx, func(appID, deployID string) { found = append(found, rev{appID, deployID}) }); err != nil {
		return 0, err
	}
	var n int64
	var errs error
	for _, r := range found {
		cur, err := a.store.Revision(ctx, r.deploy)
		switch {
		case errors.Is(err, revision.ErrNotFound):
			// Objects are written only for a revision on record: none left means none kept.
		case err != nil:
			errs = errors.Join(errs, err)
			continue
		case !cur.State.Terminal() || cur.AppID != r.app:
			continue // still preparing, ready or serving (or not this app's: never touched)
		}
		removed, err := a.sites.RemoveRevision(ctx, r.app, r.deploy)
		n += int64(removed)
		errs = errors.Join(errs, err)
	}
	return n, errs
}
