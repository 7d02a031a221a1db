package usecase

import (
	"context"
	"errors"
	"fmt"
	"io"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/revision"
)

// prepare makes the revision ready to take traffic and reports the outcome. A revision found
// in `preparing` after a restart is prepared again from the start; its release Job is reused
// by name.
func (a *Agent) prepare(ctx context.Context, r revision.Revision) {
	ctx, span := prepareSpan(ctx, r.DeployID) // traces.go
	defer span.End()
	// It may have waited for an earlier deploy of the app; a discard meanwhile wins. And a
	// pass can act on a list read just before another preparation of this revision finished
	// (it commits its outcome, then stops counting as busy): only a revision still pending or
	// preparing on record is prepared, so none is prepared twice.
	started := false
	err := a.store.InTx(ctx, func(tx Tx) error {
		cur, err := tx.Revision(ctx, r.DeployID)
		if err != nil {
			return err
		}
		if cur.DiscardWanted || !cur.State.Unprepared() {
			return nil
		}
		if err := move(ctx, tx, &cur, revision.StatePreparing); err != nil {
			return err
		}
		r = cur
		started = true
		return a.publishStep(ctx, tx, r, StepBuildStarted, "", "")
	})
	if err != nil {
		a.log.WarnContext(ctx, "start preparing", "deploy", r.DeployID, "err", err.Error())
		return
	}
	if !started {
		return
	}
	switch {
	case r.Kind.Static() && a.sites == nil:
		err = &revision.FailError{Code: revision.CodeZoneError, Message: "this zone has no site store"}
	case r.Kind.Static():
		err = a.prepareStatic(ctx, r)
	case a.runner == nil:
		err = &revision.FailError{Code: revision.CodeZoneError, Message: "this zone runs no services"}
	case r.Kind.Image() && revision.CheckProcesses(r.Processes) != nil:
		// The deploys service checks them too; a command that slipped past fails here.
		err = &revision.FailError{Code: revision.CodeInvalidArtifact, Message: revision.CheckProcesses(r.Processes).Error()}
	default:
		err = a.runner.Prepare(ctx, r, &jobs{a: a, r: r})
	}
	if ctx.Err() != nil {
		return // shutting down: the revision stays `preparing` and is redone after restart
	}
	state, step, code, msg := revision.StateReady, StepReady, "", ""
	if errors.Is(err, revision.ErrDiscarded) {
		state, step = revision.StateDiscarded, StepDiscarded
		if cerr := a.removeRevision(ctx, r); cerr != nil {
			a.log.WarnContext(ctx, "remove discarded revision", "deploy", r.DeployID, "err", cerr.Error())
		}
	} else if err != nil {
		var fe *revision.FailError
		if !errors.As(err, &fe) {
			fe = &revision.FailError{Code: revision.CodeZoneError, Message: err.Error()}
		}
		state, step, code, msg = revision.StateFailed, StepFailed, fe.Code, fe.Message
		a.log.InfoContext(ctx, "revision failed", "deploy", r.DeployID, "code", code, "message", msg)
		// A failed revision never serves; its files go now.
		if cerr := a.removeRevision(ctx, r); cerr != nil {
			a.log.WarnContext(ctx, "remove failed revision", "deploy", r.DeployID, "err", cerr.Error())
		}
	}
	err = a.store.InTx(ctx, func(tx Tx) error {
		done := r
		if err := move(ctx, tx, &done, state); err != nil {
			return err
		}
		if step == StepReady && !r.Kind.Static() {
			return a.publishReady(ctx, tx, r)
		}
		return a.publishStep(ctx, tx, r, step, code, msg)
	})
	if err != nil {
		a.log.WarnContext(ctx, "record preparation", "deploy", r.DeployID, "err", err.Error())
	}
}

// staticLimits: a site holds files and folders only.
var staticLimits = artifact.Limits{MaxBytes: artifact.DefaultLimits.MaxBytes, MaxEntries: artifact.DefaultLimits.MaxEntries}

// prepareStatic publishes the site to the zone's bucket straight from the artifact's
// stream: each file passes the unpacker's rules (artifact.Files) and goes into the
// revision's bundle as it arrives, read once, with no scratch folder. Nothing of the site
// stays on this machine; every edge of the zone serves it from the store. A refused artifact
// leaves nothing in the store (the bundle's upload is given up).
func (a *Agent) prepareStatic(ctx context.Context, r revision.Revision) error {
	if a.reuseBundle(ctx, r) { // reuse.go: a promoted preview's bundle
		return nil
	}
	f, err := a.openArtifact(ctx, r)
	if err != nil {
		return &revision.FailError{Code: revision.CodeInvalidArtifact, Message: fmt.Sprintf("artifact unavailable: %v", err)}
	}
	defer f.Close()
	err = a.sites.PublishFiles(ctx, r.AppID, r.DeployID, func(add func(string, int64, io.Reader) error) error {
		return artifact.Files(f, staticLimits, add)
	})
	if errors.Is(err, artifact.ErrUnsafe) {
		return &revision.FailError{Code: revision.CodeInvalidArtifact, Message: err.Error()}
	}
	return err
}

// jobs gives the runner the release-Job record and step reports of one revision.
type jobs struct {
	a *Agent
	r revision.Revision
}

func (j *jobs) JobState(ctx context.Context, name string) (revision.JobState, error) {
	var state revision.JobState
	err := j.a.store.InTx(ctx, func(tx Tx) error {
		var err error
		state, err = tx.ReleaseJob(ctx, name)
		return err
	})
	return state, err
}

func (j *jobs) SetJobState(ctx context.Context, name, deployID string, state revision.JobState) error {
	return j.a.store.InTx(ctx, func(tx Tx) error { return tx.SetReleaseJob(ctx, name, deployID, state) })
}

func (j *jobs) Step(ctx context.Context, step Step, message string) error {
	return j.a.report(ctx, j.r, step, "", message)
}

func (j *jobs) BuildDetected(ctx context.Context, plan buildplan.Plan) error {
	return j.a.store.InTx(ctx, func(tx Tx) error {
		if err := tx.SetProcesses(ctx, j.r.DeployID, plan.ProcessList()); err != nil {
			return err
		}
		return j.a.publishBuild(ctx, tx, j.r, plan)
	})
}

func (j *jobs) Discarded(ctx context.Context) bool {
	cur, err := j.a.store.Revision(ctx, j.r.DeployID)
	return err == nil && cur.DiscardWanted
}
