package usecase

import (
	"context"
	"errors"
	"fmt"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// Previews (docs/previews.md, "At the edge"): a preview's revision is prepared as any
// revision of its app, but activating it points only the preview's host at it. The app's
// live revision, formation, hostnames and status are never touched.

// PreviewRunner is what a runner does for service previews (supervisor.Local): one web
// instance per preview, apart from the app's formation, napping when idle.
type PreviewRunner interface {
	// ActivatePreview makes the prepared revision the preview's (its healthy instance
	// serves at once) and stops the preview's previous one.
	ActivatePreview(ctx context.Context, rev revision.Revision) error
	// StopPreview stops the preview's instance, if it runs.
	StopPreview(ctx context.Context, appID, previewID string) error
}

// PreviewTx is the record of previews, in the transaction of Tx (store.Tx).
type PreviewTx interface {
	Preview(ctx context.Context, previewID string) (revision.Preview, bool, error)
	SetPreview(ctx context.Context, p revision.Preview) error
	RemovePreview(ctx context.Context, appID, previewID, reason string) (revision.Preview, bool, error)
}

// PreviewStore lists the previews the edge answers for (store.Store).
type PreviewStore interface {
	Previews(ctx context.Context) ([]revision.Preview, error)
}

// errNoPreviewRecord: the store in use keeps no previews.
var errNoPreviewRecord = errors.New("usecase: this zone's store keeps no previews")

func previewTx(tx Tx) (PreviewTx, error) {
	if p, ok := tx.(PreviewTx); ok {
		return p, nil
	}
	return nil, errNoPreviewRecord
}

// ActivatePreview records that the control plane wants the preview's revision served at
// its host. The command's formation is ignored. A command whose preview is not the one the
// revision was started for changes nothing.
func (a *Agent) ActivatePreview(ctx context.Context, tx Tx, deployID, previewID string) error {
	rev, err := tx.Revision(ctx, deployID)
	if errors.Is(err, revision.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if rev.PreviewID != previewID {
		a.log.WarnContext(ctx, "a preview activation for a revision of another preview was ignored", "deploy", deployID, "preview", previewID)
		return nil
	}
	return tx.Want(ctx, deployID, true)
}

// refuseRemovedPreview has a new revision of a removed preview discarded rather than
// prepared: its host answers 410 for good.
func (a *Agent) refuseRemovedPreview(ctx context.Context, tx Tx, r revision.Revision) error {
	ptx, err := previewTx(tx)
	if err != nil {
		return err
	}
	p, ok, err := ptx.Preview(ctx, r.PreviewID)
	if err != nil || !ok || (!p.Removed && p.AppID == r.AppID) {
		return err
	}
	return tx.Want(ctx, r.DeployID, false)
}

// RemovePreview makes the preview a tombstone: its host answers 410 at once, its instance
// stops, its revision's files go and a revision of it still in preparation is discarded.
// Like an app's delete, the edge stops serving before the record commits; a redelivery
// repeats it harmlessly.
func (a *Agent) RemovePreview(ctx context.Context, tx Tx, appID, previewID, reason string) error {
	ptx, err := previewTx(tx)
	if err != nil {
		return err
	}
	before, found, err := ptx.RemovePreview(ctx, appID, previewID, reason)
	if err != nil {
		return err
	}
	if found && before.AppID != appID {
		return nil
	}
	tomb, _, err := ptx.Preview(ctx, previewID) // as recorded: its slug, when known
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.removedPreviews[previewID] = true
	a.table.SetPreview(edge.Preview{ID: previewID, AppID: appID, Slug: tomb.Slug, Removed: true})
	a.mu.Unlock()
	if pr, ok := a.runner.(PreviewRunner); ok {
		if err := pr.StopPreview(ctx, appID, previewID); err != nil {
			return err
		}
	}
	if !found || before.DeployID == "" {
		return nil
	}
	served, err := tx.Revision(ctx, before.DeployID)
	if errors.Is(err, revision.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if served.State == revision.StateActive {
		if err := move(ctx, tx, &served, revision.StateRetired); err != nil {
			return err
		}
	}
	return a.removeRevision(ctx, served)
}

// activatePreview points the preview's host at a ready revision of it, unless the preview
// was removed or a newer revision of it serves (then the revision is discarded). The
// preview's previous revision retires and its files go.
func (a *Agent) activatePreview(ctx context.Context, r revision.Revision) error {
	var previous, dropped *revision.Revision
	switched := false
	err := a.store.InTx(ctx, func(tx Tx) error {
		ptx, err := previewTx(tx)
		if err != nil {
			return err
		}
		rev, err := tx.Revision(ctx, r.DeployID)
		if err != nil {
			return err
		}
		if rev.State != revision.StateReady || rev.DiscardWanted {
			return nil
		}
		cur, ok, err := ptx.Preview(ctx, rev.PreviewID)
		if err != nil {
			return err
		}
		why := ""
		switch {
		case ok && cur.AppID != rev.AppID:
			why = "the preview belongs to another app"
		case ok && cur.Removed:
			why = "the preview was removed"
		case ok && cur.DeployID > rev.DeployID:
			why = "a newer revision serves the preview"
		}
		if why != "" {
			if err := move(ctx, tx, &rev, revision.StateDiscarded); err != nil {
				return err
			}
			dropped = &rev
			return a.publishStep(ctx, tx, rev, StepDiscarded, "", why)
		}
		if ok && cur.DeployID != "" && cur.DeployID != rev.DeployID {
			prev, err := tx.Revision(ctx, cur.DeployID)
			if err != nil && !errors.Is(err, revision.ErrNotFound) {
				return err
			}
			if err == nil {
				if prev.State == revision.StateActive {
					if err := move(ctx, tx, &prev, revision.StateRetired); err != nil {
						return err
					}
				}
				previous = &prev
			}
		}
		if !rev.Kind.Static() {
			pr, ok := a.runner.(PreviewRunner)
			if a.runner == nil || !ok {
				return errors.New("usecase: this zone runs no service previews")
			}
			// Idempotent, as the app's switch is: a failed commit is retried.
			if err := pr.ActivatePreview(ctx, rev); err != nil {
				return err
			}
		}
		p := revision.Preview{ID: rev.PreviewID, AppID: rev.AppID, Slug: rev.Slug, DeployID: rev.DeployID, Kind: rev.Kind}
		if err := ptx.SetPreview(ctx, p); err != nil {
			return err
		}
		if err := move(ctx, tx, &rev, revision.StateActive); err != nil {
			return err
		}
		if err := a.publishStep(ctx, tx, rev, StepActivated, "", fmt.Sprintf("served as preview %s", rev.PreviewID)); err != nil {
			return err
		}
		// The edge serves it before the report can leave, as for the app's own switch.
		a.servePreview(edgePreview(p))
		switched = true
		return nil
	})
	if err != nil {
		return err
	}
	if dropped != nil {
		return a.removeRevision(ctx, *dropped)
	}
	if switched && previous != nil {
		return a.removeRevision(ctx, *previous)
	}
	return nil
}

// servePreview puts a preview in the edge's table at once, unless its app was deleted.
func (a *Agent) servePreview(p edge.Preview) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.forgotten[p.AppID] || a.removedPreviews[p.ID] {
		p = edge.Preview{ID: p.ID, AppID: p.AppID, Slug: p.Slug, Removed: true}
	}
	a.table.SetPreview(p)
}

// reloadPreviews installs the previews on record in the edge's table (the caller holds mu);
// a deleted app's are tombstones even before its delete commits.
func (a *Agent) reloadPreviews(list []revision.Preview) {
	out := make([]edge.Preview, 0, len(list))
	for _, p := range list {
		ep := edgePreview(p)
		if (a.forgotten[p.AppID] || a.removedPreviews[p.ID]) && !ep.Removed {
			ep = edge.Preview{ID: p.ID, AppID: p.AppID, Slug: p.Slug, Removed: true}
		}
		out = append(out, ep)
	}
	a.table.ReplacePreviews(out)
}

// loadPreviews reads the previews on record; a store that keeps none has none.
func (a *Agent) loadPreviews(ctx context.Context) ([]revision.Preview, error) {
	ps, ok := a.store.(PreviewStore)
	if !ok {
		return nil, nil
	}
	return ps.Previews(ctx)
}

func edgePreview(p revision.Preview) edge.Preview {
	if p.Removed {
		return edge.Preview{ID: p.ID, AppID: p.AppID, Slug: p.Slug, Removed: true}
	}
	return edge.Preview{ID: p.ID, AppID: p.AppID, Slug: p.Slug, DeployID: p.DeployID, Kind: p.Kind}
}
