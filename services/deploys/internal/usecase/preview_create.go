package usecase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"tori.dev/contract/names"
	"tori.dev/pkg/accessgate"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
	"tori.dev/services/deploys/internal/upload"
)

// CreatePreviewImage starts a preview of an image (DESIGN40 "Previews"). Refusals in order:
// 400 (the body, then the image's registry), 402 hold, 403 preview_limit_reached. created
// is false when the name held a preview already: replaced in place, same id and URL.
func (s *Service) CreatePreviewImage(ctx context.Context, accountID, slug string, img ImageInput, in preview.Input) (*preview.Preview, bool, error) {
	if err := in.Check(); err != nil {
		return nil, false, err
	}
	if _, err := s.images.ParseImage(img.Image); err != nil {
		return nil, false, err
	}
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, false, err
	}
	if app.Kind != "service" {
		return nil, false, fmt.Errorf("%w: the app is %s", deploy.ErrKindMismatch, app.Kind)
	}
	if err := s.images.CheckResolved(ctx, img.Image); err != nil {
		return nil, false, err
	}
	if err := s.holdCheck(ctx, accountID); err != nil {
		return nil, false, err
	}
	plan, err := s.planFor(ctx, accountID)
	if err != nil {
		return nil, false, err
	}
	now := s.clock()
	d := &deploy.Deploy{
		ID: s.newID(), AppID: app.ID, AccountID: accountID, Kind: deploy.KindImage, Status: deploy.Building,
		Image: img.Image, Release: img.Release, Framework: deploy.FrameworkStatic, Processes: img.Processes,
		CreatedAt: now, UpdatedAt: now,
	}
	if d.Env, err = s.previewSnapshot(ctx, app.ID, d.ID, in); err != nil {
		return nil, false, err
	}
	return s.insertPreview(ctx, app, plan, d, in, revisionOptions{releaseGiven: img.Release != nil})
}

// CreatePreviewUpload starts a preview of a static site or a source tarball from a multipart
// body, through the deploys' one upload path. fields fills in as the body streams (the
// preview's own parts); it is checked once the body is in, so a malformed part refuses with
// 400 after the upload, and a hold (402) refuses before any byte is read.
func (s *Service) CreatePreviewUpload(ctx context.Context, accountID, slug string, contentLength int64, body io.Reader, boundary string,
	service bool, in *preview.Input, fields upload.Fields) (*preview.Preview, bool, error) {
	var out *preview.Preview
	var created bool
	_, err := s.createFromUpload(ctx, accountID, slug, contentLength, body, boundary, service, fields,
		func(app App, plan Plan, d *deploy.Deploy, opts revisionOptions) error {
			if err := in.Check(); err != nil {
				return err
			}
			if service {
				snap, err := s.previewSnapshot(ctx, app.ID, d.ID, *in)
				if err != nil {
					return err
				}
				d.Env = snap
			}
			var err error
			out, created, err = s.insertPreview(ctx, app, plan, d, *in, opts)
			return err
		})
	return out, created, err
}

// newPreviewTries bounds drawing a fresh id: 36^6 ids make a clash rare, two in a row rarer.
const newPreviewTries = 5

// insertPreview writes the preview's revision d and the preview (new, or the same name's
// replaced in place) and tells the zone, under the account's lock so the plan's previews and
// concurrent deploys hold however many requests race.
func (s *Service) insertPreview(ctx context.Context, app App, plan Plan, d *deploy.Deploy, in preview.Input, opts revisionOptions) (*preview.Preview, bool, error) {
	var out *preview.Preview
	created := false
	err := s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockAccount(ctx, d.AccountID); err != nil {
			return err
		}
		if err := tx.DeleteUpload(ctx, d.ID); err != nil {
			return err
		}
		var existing *preview.Preview
		if in.Name != "" {
			var err error
			if existing, err = tx.ActivePreviewByName(ctx, app.ID, in.Name); err != nil {
				return err
			}
		}
		// A replacement of a preview the limit counts already does not count again.
		if existing == nil || !existing.Status.Counted() {
			n, err := tx.CountPreviews(ctx, app.ID)
			if err != nil {
				return err
			}
			if n >= plan.Previews {
				return &deploy.LimitError{Err: preview.ErrLimit, Limit: plan.Previews, Plan: plan.Name}
			}
		}
		n, err := s.underWay(ctx, tx, d.AccountID)
		if err != nil {
			return err
		}
		if n >= plan.ConcurrentDeploys {
			return deployLimit(plan)
		}
		now := s.clock()
		ttl := preview.CapTTL(in.TTLSeconds, plan.PreviewMaxTTLHours)
		if existing != nil {
			// A revision of it still under way is replaced by this one.
			if err := s.cancelPreviewRevision(ctx, tx, app, existing.DeployID, now); err != nil {
				return err
			}
			existing.Replace(now, d.ID, preview.Database(in.Database), in.Keys(), ttl)
			if err := tx.UpdatePreview(ctx, existing); err != nil {
				return err
			}
			out = existing
		} else {
			p := &preview.Preview{
				Name: in.Name, AppID: app.ID, AccountID: d.AccountID, Status: preview.Deploying, DeployID: d.ID,
				Database: preview.Database(in.Database), EnvKeys: in.Keys(), TTLSeconds: ttl,
				ExpiresAt: now.Add(time.Duration(ttl) * time.Second), CreatedAt: now, UpdatedAt: now,
			}
			if err := insertFreshPreview(ctx, tx, p, in.Name == ""); err != nil {
				return err
			}
			out, created = p, true
		}
		d.PreviewID = out.ID
		if err := tx.Insert(ctx, d); err != nil {
			return err
		}
		if err := tx.RecordRevisionPlan(ctx, d.ID, plan.Version); err != nil {
			return err
		}
		accessgate.SetTarget(ctx, "preview/"+out.ID)
		accessgate.Annotate(ctx, "deployId", d.ID)
		accessgate.Annotate(ctx, "name", out.Name)
		return s.startRevision(ctx, tx, app, plan, d, opts)
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// insertFreshPreview draws ids until one is free; a preview without a name is named by it.
func insertFreshPreview(ctx context.Context, tx Tx, p *preview.Preview, nameIsID bool) error {
	for range newPreviewTries {
		p.ID = names.NewPreviewID()
		if nameIsID {
			p.Name = p.ID
		}
		ok, err := tx.InsertPreview(ctx, p)
		if err != nil || ok {
			return err
		}
	}
	return errors.New("preview: no free id after several draws")
}

// cancelPreviewRevision cancels a preview's revision still under way and tells the zone to
// discard it; one that finished is left as it is (the zone serves it until replaced).
func (s *Service) cancelPreviewRevision(ctx context.Context, tx Tx, app App, deployID string, now time.Time) error {
	d, err := tx.Deploy(ctx, deployID)
	if errors.Is(err, deploy.ErrNotFound) {
		return nil
	}
	if err != nil || !d.Status.Open() {
		return err
	}
	if err := d.Cancel(now); err != nil {
		return err
	}
	if err := tx.Update(ctx, d); err != nil {
		return err
	}
	return s.discard(ctx, tx, app, d)
}
