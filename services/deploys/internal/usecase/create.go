package usecase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"tori.dev/pkg/accessgate"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/upload"
)

// retryAfterDeployLimit is what a 429 deploy_limit_reached suggests: long enough for a
// typical static deploy to finish, short enough for a CLI to poll.
const retryAfterDeployLimit = 30

// ImageInput is an image deploy request, already decoded.
type ImageInput struct {
	Image        string
	Release      []string
	ForceRestart bool
	// Processes are the body's `processes`, checked (deploy.ParseProcesses); nil for none.
	Processes []deploy.Process
}

// precheck applies the cheap refusals before any byte of an upload is read.
func (s *Service) precheck(ctx context.Context, accountID, slug string, wantService bool) (App, Plan, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return App{}, Plan{}, err
	}
	if (app.Kind == "service") != wantService {
		return App{}, Plan{}, fmt.Errorf("%w: the app is %s", deploy.ErrKindMismatch, app.Kind)
	}
	if err := s.holdCheck(ctx, accountID); err != nil {
		return App{}, Plan{}, err
	}
	plan, err := s.planFor(ctx, accountID)
	if err != nil {
		return App{}, Plan{}, err
	}
	return app, plan, nil
}

// UploadHold is how long an upload holds its slot of the concurrent-deploy limit at most: the
// gateway gives an upload an hour, and the slot of a process that died mid-upload comes
// back after this.
const UploadHold = time.Hour + 5*time.Minute

// reserveUpload holds one of the plan's concurrent deploys for upload id before any byte of
// it is read, under the account's lock: deploys under way and uploads under way together
// never pass the limit. The slot is not the deploy: the request's audit entry waits for the
// deploy's own transaction.
func (s *Service) reserveUpload(ctx context.Context, accountID, id string, plan Plan) error {
	return s.store.InTx(aside(ctx), func(tx Tx) error {
		if err := tx.LockAccount(ctx, accountID); err != nil {
			return err
		}
		n, err := s.underWay(ctx, tx, accountID)
		if err != nil {
			return err
		}
		if n >= plan.ConcurrentDeploys {
			return deployLimit(plan)
		}
		return tx.InsertUpload(ctx, id, accountID, s.clock().Add(UploadHold))
	})
}

// underWay counts the account's deploys building or releasing and its uploads under way.
func (s *Service) underWay(ctx context.Context, tx Tx, accountID string) (int64, error) {
	open, err := tx.CountOpen(ctx, accountID)
	if err != nil {
		return 0, err
	}
	uploads, err := tx.CountUploads(ctx, accountID, s.clock())
	if err != nil {
		return 0, err
	}
	return open + uploads, nil
}

// releaseUpload gives an upload's slot back; once its deploy is inserted there is none left.
func (s *Service) releaseUpload(ctx context.Context, id string) {
	if err := s.store.DeleteUpload(context.WithoutCancel(ctx), id); err != nil {
		s.log.WarnContext(ctx, "release upload slot", "err", err.Error())
	}
}

func deployLimit(p Plan) error {
	return &deploy.LimitError{Err: deploy.ErrDeployLimit, Limit: p.ConcurrentDeploys, Plan: p.Name, RetryAfter: retryAfterDeployLimit}
}

func uploadLimit(p Plan) error {
	return &deploy.LimitError{Err: deploy.ErrUploadTooLarge, Limit: p.UploadBytes, Plan: p.Name}
}

// CreateImage starts an image deploy. Without ForceRestart, an image and environment equal
// to the live revision's give the live deploy back and create nothing (created false).
func (s *Service) CreateImage(ctx context.Context, accountID, slug string, in ImageInput) (*deploy.Deploy, bool, error) {
	if _, err := s.images.ParseImage(in.Image); err != nil {
		return nil, false, err
	}
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, false, err
	}
	if app.Kind != "service" {
		return nil, false, fmt.Errorf("%w: the app is %s", deploy.ErrKindMismatch, app.Kind)
	}
	// After the ownership check: a name is looked up only for its app's owner.
	if err := s.images.CheckResolved(ctx, in.Image); err != nil {
		return nil, false, err
	}
	if err := s.holdCheck(ctx, accountID); err != nil {
		return nil, false, err
	}
	id := s.newID()
	audit(ctx, id, deploy.KindImage)
	snap, err := s.snapshot(ctx, app.ID, id)
	if err != nil {
		return nil, false, err
	}
	if !in.ForceRestart {
		live, err := s.store.Live(ctx, app.ID)
		if err != nil {
			return nil, false, err
		}
		if live != nil && live.Kind == deploy.KindImage && live.Image == in.Image && slices.Equal(live.Processes, in.Processes) {
			same, err := s.sameEnv(ctx, app.ID, live.Env, snap)
			if err != nil {
				return nil, false, err
			}
			if same {
				// Nothing changes, yet the deploy was asked for and answered: the log says so.
				audit(ctx, live.ID, deploy.KindImage)
				accessgate.Annotate(ctx, "unchanged", "true")
				if err := s.store.InTx(ctx, func(Tx) error { return nil }); err != nil {
					return nil, false, err
				}
				return live, false, nil
			}
		}
	}
	plan, err := s.planFor(ctx, accountID)
	if err != nil {
		return nil, false, err
	}
	now := s.clock()
	d := &deploy.Deploy{
		ID: id, AppID: app.ID, AccountID: accountID, Kind: deploy.KindImage, Status: deploy.Building,
		Image: in.Image, Release: in.Release, Env: snap, Framework: deploy.FrameworkStatic,
		Processes: in.Processes, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.insert(ctx, app, plan, d, revisionOptions{releaseGiven: in.Release != nil}); err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// CreateUpload starts a static or source deploy from a multipart body, streaming it to object
// storage within the plan's upload size. On any refusal nothing stays behind: the object is
// aborted or deleted and no row is written.
func (s *Service) CreateUpload(ctx context.Context, accountID, slug string, contentLength int64, body io.Reader, boundary string, service bool) (*deploy.Deploy, error) {
	return s.createFromUpload(ctx, accountID, slug, contentLength, body, boundary, service, nil,
		func(app App, plan Plan, d *deploy.Deploy, opts revisionOptions) error {
			if service {
				snap, err := s.snapshot(ctx, app.ID, d.ID)
				if err != nil {
					return err
				}
				d.Env = snap
			}
			return s.insert(ctx, app, plan, d, opts)
		})
}

// uploadFinish takes a received upload (its artifact committed, its deploy not yet written)
// the rest of the way: a snapshot and the insert. An error drops the artifact.
type uploadFinish func(app App, plan Plan, d *deploy.Deploy, opts revisionOptions) error

// createFromUpload is the one upload path of deploys and previews: the cheap refusals, the
// upload's slot of the concurrent-deploy limit, the stream into object storage (fields reads
// the parts the payload does not know, nil for none), then finish.
func (s *Service) createFromUpload(ctx context.Context, accountID, slug string, contentLength int64, body io.Reader, boundary string,
	service bool, fields upload.Fields, finish uploadFinish) (*deploy.Deploy, error) {
	app, plan, err := s.precheck(ctx, accountID, slug, service)
	if err != nil {
		return nil, err
	}
	if contentLength > plan.UploadBytes {
		return nil, uploadLimit(plan)
	}
	id := s.newID()
	kind, ext := deploy.KindStatic, ".tar"
	if service {
		kind, ext = deploy.KindSource, ".tar.gz"
	}
	audit(ctx, id, kind)
	if err := s.reserveUpload(ctx, accountID, id, plan); err != nil {
		return nil, err
	}
	defer s.releaseUpload(ctx, id)
	key := "artifacts/" + app.ID + "/" + id + ext
	up, err := s.objects.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	limited := &objects.LimitedReader{R: body, Limit: plan.UploadBytes}
	var parts upload.SourceParts
	var pkg upload.PackageJSON
	if service {
		parts, err = upload.SourceWith(limited, boundary, up, fields)
		pkg = parts.Package
	} else {
		_, pkg, err = upload.StaticWith(limited, boundary, up, fields)
	}
	if err == nil {
		// To the end: a streamed body is checked against its signature there, and nothing is
		// committed (or referenced) before it passed.
		_, err = io.Copy(io.Discard, limited)
	}
	if errors.Is(err, objects.ErrTooLarge) {
		err = uploadLimit(plan)
	}
	if err != nil {
		up.Abort()
		return nil, err
	}
	if err := up.Commit(); err != nil {
		return nil, err
	}
	d := &deploy.Deploy{ID: id, AppID: app.ID, AccountID: accountID, Kind: kind, Status: deploy.Building, Release: parts.Release, ArtifactKey: key}
	d.Framework = s.framework(ctx, d, pkg)
	now := s.clock()
	d.CreatedAt, d.UpdatedAt = now, now
	if err := finish(app, plan, d, revisionOptions{releaseGiven: parts.ReleaseGiven, clearCache: parts.ClearCache}); err != nil {
		s.dropObject(ctx, key)
		return nil, err
	}
	return d, nil
}

// audit names the deploy a request makes in its audit entry, which commits with the deploy.
func audit(ctx context.Context, deployID string, kind deploy.Kind) {
	accessgate.SetTarget(ctx, "deploy/"+deployID)
	accessgate.Annotate(ctx, "kind", string(kind))
}

// dropObject deletes an object no row will refer to. A failure is only logged: the artifact
// sweep removes unreferenced artifacts later.
func (s *Service) dropObject(ctx context.Context, key string) {
	if err := s.objects.Delete(context.WithoutCancel(ctx), key); err != nil {
		s.log.WarnContext(ctx, "delete unreferenced artifact", "key", key, "err", err.Error())
	}
}

func (s *Service) snapshot(ctx context.Context, appID, deployID string) (deploy.Snapshot, error) {
	if s.env == nil {
		return deploy.Snapshot{}, nil
	}
	snap, err := s.env.Snapshot(ctx, appID, deployID)
	if err != nil {
		return deploy.Snapshot{}, fmt.Errorf("%w: %v", deploy.ErrSnapshotUnavailable, err)
	}
	if snap.For == "" {
		snap.For = deployID
	}
	return snap, nil
}

// sameEnv compares two snapshots; two empty ones are equal without asking.
func (s *Service) sameEnv(ctx context.Context, appID string, a, b deploy.Snapshot) (bool, error) {
	if a.Empty() || b.Empty() {
		return a.Empty() && b.Empty(), nil
	}
	if s.env == nil {
		return false, nil
	}
	same, err := s.env.Same(ctx, appID, a, b)
	if err != nil {
		return false, fmt.Errorf("%w: %v", deploy.ErrSnapshotUnavailable, err)
	}
	return same, nil
}

// insert writes a new building deploy and tells the zone, under the account's lock so that
// the concurrent-deploy limit holds however many requests race.
func (s *Service) insert(ctx context.Context, app App, plan Plan, d *deploy.Deploy, opts revisionOptions) error {
	return s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockAccount(ctx, d.AccountID); err != nil {
			return err
		}
		// An upload's slot becomes its deploy's: one leaves the count as the other joins.
		if err := tx.DeleteUpload(ctx, d.ID); err != nil {
			return err
		}
		n, err := s.underWay(ctx, tx, d.AccountID)
		if err != nil {
			return err
		}
		if n >= plan.ConcurrentDeploys {
			return deployLimit(plan)
		}
		if err := tx.Insert(ctx, d); err != nil {
			return err
		}
		if err := s.publishCreated(ctx, tx, d); err != nil {
			return err
		}
		if err := tx.RecordRevisionPlan(ctx, d.ID, plan.Version); err != nil {
			return err
		}
		if opts.declarationsOf != "" {
			if err := tx.CopyDeclarations(ctx, opts.declarationsOf, d.ID); err != nil {
				return err
			}
		}
		return s.startRevision(ctx, tx, app, plan, d, opts)
	})
}
