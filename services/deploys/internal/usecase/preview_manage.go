package usecase

import (
	"context"

	"tori.dev/pkg/accessgate"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
)

// The reasons a RemovePreview gives.
const (
	removeExpired = "expired"
	removeDeleted = "deleted"
)

// Previews lists the app's previews but the deleted ones, newest first.
func (s *Service) Previews(ctx context.Context, accountID, slug string) ([]*preview.Preview, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	out, err := s.store.Previews(ctx, app.ID)
	if out == nil && err == nil {
		out = []*preview.Preview{}
	}
	return out, err
}

// Preview is one preview of the caller's app, named by id or, failing that, by name.
func (s *Service) Preview(ctx context.Context, accountID, slug, ref string) (*preview.Preview, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	return s.store.PreviewByRef(ctx, app.ID, ref)
}

// ExtendPreview sets the preview's expiry to now + ttlSeconds (capped by the plan's
// previewMaxTtlHours); 409 preview_expired once it is gone.
func (s *Service) ExtendPreview(ctx context.Context, accountID, slug, ref string, ttlSeconds int64) (*preview.Preview, error) {
	if ttlSeconds < preview.MinTTLSeconds {
		return nil, &deploy.ParamError{Name: "ttlSeconds", Reason: "must be an integer of at least 60"}
	}
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	plan, err := s.planFor(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var out *preview.Preview
	err = s.store.InTx(ctx, func(tx Tx) error {
		p, err := tx.PreviewByRef(ctx, app.ID, ref)
		if err != nil {
			return err
		}
		accessgate.SetTarget(ctx, "preview/"+p.ID)
		if err := p.Extend(s.clock(), preview.CapTTL(&ttlSeconds, plan.PreviewMaxTTLHours)); err != nil {
			return err
		}
		out = p
		return tx.UpdatePreview(ctx, p)
	})
	return out, err
}

// DeletePreview ends the preview and tells its zone to stop serving it (410 from then on).
// Deleting one already deleted changes nothing; an expired one becomes deleted.
func (s *Service) DeletePreview(ctx context.Context, accountID, slug, ref string) error {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(tx Tx) error {
		p, err := tx.PreviewByRef(ctx, app.ID, ref)
		if err != nil {
			return err
		}
		accessgate.SetTarget(ctx, "preview/"+p.ID)
		if p.Status == preview.Deleted {
			return nil
		}
		return s.removePreview(ctx, tx, app, p, preview.Deleted, removeDeleted)
	})
}

// removePreview ends p (expired or deleted): its revision under way is cancelled and the
// zone removes what it serves.
func (s *Service) removePreview(ctx context.Context, tx Tx, app App, p *preview.Preview, to preview.Status, reason string) error {
	now := s.clock()
	p.Remove(now, to)
	if err := tx.UpdatePreview(ctx, p); err != nil {
		return err
	}
	if err := s.cancelPreviewRevision(ctx, tx, app, p.DeployID, now); err != nil {
		return err
	}
	if app.Zone == "" {
		return nil
	}
	return tx.Publish(ctx, zonebus.CommandKey(app.Zone, zonebus.CommandPreviewRemove),
		&zonev1.RemovePreview{AppId: app.ID, PreviewId: p.ID, Reason: reason})
}

// expireBatch bounds one round of the preview sweep.
const expireBatch = 100

// ExpirePreviews ends every preview past its expiry and tells each zone to remove it. The
// rows are taken FOR UPDATE SKIP LOCKED, so replicas sweeping together expire each once.
func (s *Service) ExpirePreviews(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.InTx(ctx, func(tx Tx) error {
		due, err := tx.DuePreviews(ctx, s.clock(), expireBatch)
		if err != nil {
			return err
		}
		for _, p := range due {
			app, err := tx.App(ctx, p.AppID)
			if err != nil {
				return err
			}
			if err := s.removePreview(ctx, tx, app, p, preview.Expired, removeExpired); err != nil {
				return err
			}
		}
		n = int64(len(due))
		return nil
	})
	return n, err
}

// pruneBatch bounds one round of pruning preview revisions.
const pruneBatch = 500

// PrunePreviewRevisions deletes the rows of preview revisions nothing serves any more (a
// replaced one, or any of a preview that is gone), so stale previews leave no artifacts
// behind: the artifact sweep removes what no row refers to.
func (s *Service) PrunePreviewRevisions(ctx context.Context) (int64, error) {
	return s.store.PrunePreviewRevisions(ctx, pruneBatch)
}

// PromotePreview makes a ready preview's revision live as a deploy does (release included):
// a normal deploy of the same artifact, image, processes and release command, with the
// app's live environment. A preview without overrides lets the zone reuse its revision
// (built_from_deploy_id); one with overrides is built again, as a build may have read them.
func (s *Service) PromotePreview(ctx context.Context, accountID, slug, ref string) (*deploy.Deploy, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	p, err := s.store.PreviewByRef(ctx, app.ID, ref)
	if err != nil {
		return nil, err
	}
	accessgate.Annotate(ctx, "preview", p.ID)
	if err := p.Promotable(); err != nil {
		return nil, err
	}
	src, err := s.store.Deploy(ctx, p.ServingDeployID)
	if err != nil {
		return nil, err
	}
	if err := s.holdCheck(ctx, accountID); err != nil {
		return nil, err
	}
	plan, err := s.planFor(ctx, accountID)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	d := &deploy.Deploy{
		ID: s.newID(), AppID: app.ID, AccountID: accountID, Kind: src.Kind, Status: deploy.Building,
		Image: src.Image, Release: src.Release, ArtifactKey: src.ArtifactKey, Framework: src.Framework,
		Processes: src.Processes, CreatedAt: now, UpdatedAt: now,
	}
	audit(ctx, d.ID, d.Kind)
	if d.Kind != deploy.KindStatic {
		if d.Env, err = s.snapshot(ctx, app.ID, d.ID); err != nil {
			return nil, err
		}
	}
	opts := revisionOptions{releaseGiven: src.Release != nil, declarationsOf: src.ID}
	if !p.Overridden() {
		opts.builtFrom = src.ID
	}
	if err := s.insert(ctx, app, plan, d, opts); err != nil {
		return nil, err
	}
	return d, nil
}
