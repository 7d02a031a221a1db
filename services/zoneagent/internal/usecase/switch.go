package usecase

import (
	"context"
	"errors"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// activate switches the app's traffic to a ready revision, unless a newer one already
// serves (ids are UUIDv7 and sort by creation): an older revision never replaces a newer.
func (a *Agent) activate(ctx context.Context, r revision.Revision) error {
	if r.PreviewID != "" {
		return a.activatePreview(ctx, r) // previews.go: never the app's live revision
	}
	var previous *revision.Revision
	switched := false
	err := a.store.InTx(ctx, func(tx Tx) error {
		rev, err := tx.Revision(ctx, r.DeployID)
		if err != nil {
			return err
		}
		if rev.State != revision.StateReady || rev.DiscardWanted {
			return nil
		}
		live, ok, err := tx.Live(ctx, r.AppID)
		if err != nil {
			return err
		}
		if ok && live.DeployID > r.DeployID {
			if err := move(ctx, tx, &rev, revision.StateDiscarded); err != nil {
				return err
			}
			return a.publishStep(ctx, tx, r, StepDiscarded, "", "a newer revision serves")
		}
		previous = nil
		prevID := ""
		if ok {
			prev, err := tx.Revision(ctx, live.DeployID)
			if err != nil {
				return err
			}
			if err := move(ctx, tx, &prev, revision.StateRetired); err != nil {
				return err
			}
			previous, prevID = &prev, prev.DeployID
		}
		// The switch itself is idempotent, so doing it before the commit is safe: a failed
		// commit is retried and switches to the same revision again.
		// A static site needs no switch of its own: it is published, and the edge serves
		// the revision its route names.
		if !rev.Kind.Static() {
			f, err := tx.Formation(ctx, rev.DeployID)
			if err != nil {
				return err
			}
			if err := a.runner.Activate(ctx, rev, prevID, f); err != nil {
				return err
			}
		}
		if err := tx.SetLive(ctx, revision.Route{AppID: r.AppID, Slug: r.Slug, DeployID: r.DeployID, Kind: r.Kind}); err != nil {
			return err
		}
		if err := move(ctx, tx, &rev, revision.StateActive); err != nil {
			return err
		}
		if err := a.publishStep(ctx, tx, r, StepActivated, "", ""); err != nil {
			return err
		}
		// The routing table takes the route before the commit lets the activated report
		// leave: the control plane says live on that report, and the edge must already
		// serve what it says. Like the switch above, it is repeated if the commit fails.
		a.serve(edge.Route{AppID: r.AppID, Slug: r.Slug, DeployID: r.DeployID, Kind: r.Kind})
		switched = true
		return nil
	})
	if err != nil && switched {
		// The table took a route the record did not: it serves what the record says until
		// the next pass tries the switch again.
		return errors.Join(err, a.restoreRoute(ctx, r.AppID))
	}
	if err != nil || !switched {
		return err
	}
	if previous != nil {
		// The retired revision's process was stopped by the switch; its files go too. This
		// is cleanup after the fact: a file system that fails here must not undo or hold
		// back a switch that already serves, so it comes after the commit.
		return a.removeRevision(ctx, *previous)
	}
	return nil
}

// serve puts an app's route in the edge's table at once, unless the app was deleted.
func (a *Agent) serve(r edge.Route) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.forgotten[r.AppID] {
		a.table.Set(r)
	}
}

// removeRevision deletes a revision's files (a static site's objects) and stops its process,
// if any.
func (a *Agent) removeRevision(ctx context.Context, r revision.Revision) error {
	if r.Kind.Static() {
		if a.sites == nil {
			return nil
		}
		_, err := a.sites.RemoveRevision(ctx, r.AppID, r.DeployID)
		return err
	}
	if a.runner == nil {
		return nil
	}
	return a.runner.Discard(ctx, r.AppID, r.DeployID)
}

// discard collects a revision the control plane will never put live. One that settled
// meanwhile (failed, or discarded by an earlier pass) has nothing left to collect or report.
func (a *Agent) discard(ctx context.Context, r revision.Revision) error {
	if err := a.removeRevision(ctx, r); err != nil {
		return err
	}
	return a.store.InTx(ctx, func(tx Tx) error {
		rev, err := tx.Revision(ctx, r.DeployID)
		if err != nil {
			return err
		}
		if rev.State.Terminal() {
			return nil
		}
		if err := move(ctx, tx, &rev, revision.StateDiscarded); err != nil {
			return err
		}
		return a.publishStep(ctx, tx, r, StepDiscarded, "", "")
	})
}

// ForgetApp stops serving a deleted app at once and removes its processes and its sites'
// objects. It is
// idempotent: a redelivered delete repeats it harmlessly.
func (a *Agent) ForgetApp(ctx context.Context, appID string) error {
	a.mu.Lock()
	a.forgotten[appID] = true
	a.table.RemoveApp(appID)
	a.mu.Unlock()
	if a.runner != nil {
		if err := a.runner.StopApp(ctx, appID); err != nil {
			return err
		}
	}
	if a.sites == nil {
		return nil
	}
	_, err := a.sites.RemoveApp(ctx, appID)
	return err
}
