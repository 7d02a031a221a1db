package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/store"
)

// Failure codes a zone reports.
const (
	CodeInvalidArtifact = "invalid_artifact"
	CodeNoRuntime       = "image_runtime_unavailable"
	CodeZoneError       = "zone_error"
)

// FailError is a preparation failure with the code the control plane records.
type FailError struct {
	Code    string
	Message string
}

func (e *FailError) Error() string { return e.Code + ": " + e.Message }

// prepare makes the revision ready to take traffic and reports the outcome. A revision found
// in `preparing` after a restart is prepared again from the start; its release Job is reused
// by name.
func (a *Agent) prepare(ctx context.Context, r store.Revision) {
	// It may have waited for an earlier deploy of the app; a discard meanwhile wins. And a
	// pass can act on a list read just before another preparation of this revision finished
	// (it commits its outcome, then stops counting as busy): only a revision still pending or
	// preparing on record is prepared, so none is prepared twice.
	if cur, err := a.Store.Revision(ctx, r.DeployID); err == nil &&
		(cur.DiscardWanted || (cur.State != store.StatePending && cur.State != store.StatePreparing)) {
		return
	}
	err := a.Store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.SetState(ctx, r.DeployID, store.StatePreparing); err != nil {
			return err
		}
		return a.publishStep(ctx, tx, r, StepBuildStarted, "", "")
	})
	if err != nil {
		a.Log.WarnContext(ctx, "start preparing", "deploy", r.DeployID, "err", err.Error())
		return
	}
	switch r.Kind {
	case "static":
		err = a.prepareStatic(r)
	default:
		if a.Runner == nil {
			err = &FailError{Code: CodeZoneError, Message: "this zone runs no services"}
		} else {
			err = a.Runner.Prepare(ctx, r, &jobs{a: a, r: r})
		}
	}
	if ctx.Err() != nil {
		return // shutting down: the revision stays `preparing` and is redone after restart
	}
	state, step, code, msg := store.StateReady, StepReady, "", ""
	if errors.Is(err, ErrDiscarded) {
		state, step = store.StateDiscarded, StepDiscarded
		if cerr := a.removeRevision(ctx, r); cerr != nil {
			a.Log.WarnContext(ctx, "remove discarded revision", "deploy", r.DeployID, "err", cerr.Error())
		}
	} else if err != nil {
		var fe *FailError
		if !errors.As(err, &fe) {
			fe = &FailError{Code: CodeZoneError, Message: err.Error()}
		}
		state, step, code, msg = store.StateFailed, StepFailed, fe.Code, fe.Message
		a.Log.InfoContext(ctx, "revision failed", "deploy", r.DeployID, "code", code, "message", msg)
		// A failed revision never serves; its files go now.
		if cerr := a.removeRevision(ctx, r); cerr != nil {
			a.Log.WarnContext(ctx, "remove failed revision", "deploy", r.DeployID, "err", cerr.Error())
		}
	}
	err = a.Store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.SetState(ctx, r.DeployID, state); err != nil {
			return err
		}
		return a.publishStep(ctx, tx, r, step, code, msg)
	})
	if err != nil {
		a.Log.WarnContext(ctx, "record preparation", "deploy", r.DeployID, "err", err.Error())
	}
}

// siteDir is where a static revision is unpacked.
func (a *Agent) siteDir(appID, deployID string) string {
	return filepath.Join(a.SitesDir, appID, deployID)
}

// staticLimits: a site holds files and folders only.
var staticLimits = artifact.Limits{MaxBytes: artifact.DefaultLimits.MaxBytes, MaxEntries: artifact.DefaultLimits.MaxEntries}

func (a *Agent) prepareStatic(r store.Revision) error {
	dst := a.siteDir(r.AppID, r.DeployID)
	if err := os.RemoveAll(dst); err != nil { // a half-done earlier attempt
		return err
	}
	f, err := a.openArtifact(r.ArtifactKey)
	if err != nil {
		return &FailError{Code: CodeInvalidArtifact, Message: fmt.Sprintf("artifact unavailable: %v", err)}
	}
	defer f.Close()
	if _, err := artifact.Unpack(f, false, dst, staticLimits); err != nil {
		if errors.Is(err, artifact.ErrUnsafe) {
			return &FailError{Code: CodeInvalidArtifact, Message: err.Error()}
		}
		return err
	}
	return nil
}

// jobs gives the runner the release-Job record and step reports of one revision.
type jobs struct {
	a *Agent
	r store.Revision
}

func (j *jobs) JobState(ctx context.Context, name string) (string, error) {
	var state string
	err := j.a.Store.InTx(ctx, func(tx store.Tx) error {
		var err error
		state, err = tx.ReleaseJob(ctx, name)
		return err
	})
	return state, err
}

func (j *jobs) SetJobState(ctx context.Context, name, deployID, state string) error {
	return j.a.Store.InTx(ctx, func(tx store.Tx) error { return tx.SetReleaseJob(ctx, name, deployID, state) })
}

func (j *jobs) Step(ctx context.Context, step Step, message string) error {
	return j.a.report(ctx, j.r, step, "", message)
}

func (j *jobs) Discarded(ctx context.Context) bool {
	cur, err := j.a.Store.Revision(ctx, j.r.DeployID)
	return err == nil && cur.DiscardWanted
}
