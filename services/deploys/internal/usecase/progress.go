package usecase

import (
	"context"
	"errors"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
)

// OnProgress applies a zone's report to the deploy's state machine, in the consumer's
// transaction. Reports can arrive late, twice or out of order (retries, several consumers),
// so a transition the state machine refuses is dropped, not retried.
func (s *Service) OnProgress(ctx context.Context, tx Tx, p *zonev1.DeployProgress) error {
	d, err := tx.Deploy(ctx, p.GetDeployId())
	if errors.Is(err, deploy.ErrNotFound) {
		return nil // the app was deleted and purged meanwhile
	}
	if err != nil {
		return err
	}
	app, err := tx.App(ctx, d.AppID)
	if err != nil {
		return err
	}
	if p.GetZone() != app.Zone {
		// Any zone may report progress; only the app's own speaks for its deploys.
		s.log.WarnContext(ctx, "a zone reported on a deploy it does not host", "deploy", d.ID, "zone", p.GetZone())
		return nil
	}
	if d.PreviewID != "" && p.GetStep() != zonev1.DeployStep_DEPLOY_STEP_BUILD_DETECTED {
		err = s.onPreviewProgress(ctx, tx, app, d, p)
		if isRefusal(err) {
			s.log.InfoContext(ctx, "zone report does not apply", "deploy", d.ID, "status", string(d.Status), "step", p.GetStep().String())
			return nil
		}
		return err
	}
	switch p.GetStep() {
	case zonev1.DeployStep_DEPLOY_STEP_BUILD_DETECTED:
		return s.onBuildDetected(ctx, tx, d, p.GetBuild())
	case zonev1.DeployStep_DEPLOY_STEP_RELEASE_STARTED, zonev1.DeployStep_DEPLOY_STEP_RELEASE_SUCCEEDED:
		err = s.toReleasing(ctx, tx, d)
	case zonev1.DeployStep_DEPLOY_STEP_READY:
		if err = s.saveDeclarations(ctx, tx, d, p.GetProcesses()); err == nil {
			err = s.onReady(ctx, tx, app, d)
		}
	case zonev1.DeployStep_DEPLOY_STEP_ACTIVATED:
		err = s.onActivated(ctx, tx, app, d)
	case zonev1.DeployStep_DEPLOY_STEP_FAILED:
		err = s.onFailed(ctx, tx, d, p.GetError())
	default:
		return nil // build started, discarded: nothing changes state
	}
	if isRefusal(err) {
		s.log.InfoContext(ctx, "zone report does not apply", "deploy", d.ID, "status", string(d.Status), "step", p.GetStep().String())
		return nil
	}
	return err
}

func (s *Service) toReleasing(ctx context.Context, tx Tx, d *deploy.Deploy) error {
	if d.Status != deploy.Building {
		return nil
	}
	prev := d.Status
	if err := d.StartRelease(s.clock()); err != nil {
		return err
	}
	live, err := tx.Live(ctx, d.AppID)
	if err != nil {
		return err
	}
	return s.saveTransition(ctx, tx, d, prev, live != nil)
}

// onReady tells the zone to switch traffic to a prepared revision, unless it was cancelled
// meanwhile or a newer deploy already went live, in which case the zone is told to discard
// it. The deploy stays releasing: it is live, and the app's current deploy, only once the
// zone reports that its edge serves it (onActivated), so the API never says live early.
func (s *Service) onReady(ctx context.Context, tx Tx, app App, d *deploy.Deploy) error {
	if d.Status.Terminal() {
		return s.discard(ctx, tx, app, d)
	}
	if d.Status == deploy.Live {
		return nil
	}
	if app.Deleted {
		return nil // the delete cancels it
	}
	if err := s.toReleasing(ctx, tx, d); err != nil {
		return err
	}
	current, err := tx.Live(ctx, d.AppID)
	if err != nil {
		return err
	}
	now := s.clock()
	asked, err := d.RequestActivation(now, current)
	if errors.Is(err, deploy.ErrNewerLive) {
		prev := d.Status
		if err := d.Cancel(now); err != nil {
			return err
		}
		if err := s.saveTransition(ctx, tx, d, prev, true); err != nil {
			return err
		}
		return s.discard(ctx, tx, app, d)
	}
	if err != nil || !asked {
		return err
	}
	if err := tx.Update(ctx, d); err != nil {
		return err
	}
	return s.activate(ctx, tx, app, d)
}

// onActivated puts the deploy live once its zone serves it: the previous live deploy steps
// down and deploys.deploy.live tells the apps service to name it current. The zone never
// switches to an older revision over a newer one, so a newer live deploy here means the
// reports crossed: this one served briefly and is already replaced.
func (s *Service) onActivated(ctx context.Context, tx Tx, app App, d *deploy.Deploy) error {
	if d.Status == deploy.Live {
		return nil
	}
	if d.Status.Terminal() {
		// Closed while the switch was under way (its app deleted, or past its deadline).
		s.log.WarnContext(ctx, "zone activated a closed deploy", "deploy", d.ID, "status", string(d.Status))
		return nil
	}
	if app.Deleted {
		return nil
	}
	if err := s.toReleasing(ctx, tx, d); err != nil {
		return err
	}
	current, err := tx.Live(ctx, d.AppID)
	if err != nil {
		return err
	}
	now := s.clock()
	prev := d.Status
	err = d.GoLive(now, current)
	if errors.Is(err, deploy.ErrNewerLive) {
		if err := d.Cancel(now); err != nil {
			return err
		}
		return s.saveTransition(ctx, tx, d, prev, true)
	}
	if err != nil {
		return err
	}
	superseded := ""
	if current != nil {
		// The old live deploy steps down first: one live deploy per app (a unique index).
		old := current.Status
		if err := current.Supersede(now); err != nil {
			return err
		}
		if err := s.saveTransition(ctx, tx, current, old, true); err != nil {
			return err
		}
		superseded = current.ID
	}
	if err := s.saveTransition(ctx, tx, d, prev, true); err != nil {
		return err
	}
	if err := s.publishLive(ctx, tx, d, superseded); err != nil {
		return err
	}
	return s.resendFormation(ctx, tx, app, d)
}

func (s *Service) onFailed(ctx context.Context, tx Tx, d *deploy.Deploy, code string) error {
	if code == "" {
		code = "deploy_failed"
	}
	prev := d.Status
	if err := d.Fail(s.clock(), code); err != nil {
		return err
	}
	live, err := tx.Live(ctx, d.AppID)
	if err != nil {
		return err
	}
	return s.saveTransition(ctx, tx, d, prev, live != nil)
}

// isRefusal tells a transition the state machine refused (a late or repeated report) from a
// failure worth retrying.
func isRefusal(err error) bool {
	return errors.Is(err, deploy.ErrInvalidTransition) || errors.Is(err, deploy.ErrTerminal) ||
		errors.Is(err, deploy.ErrNotCancellable)
}

// onBuildDetected records how the zone builds and starts a source deploy, whatever its state
// (a failed build is easier to read knowing what ran). A retry of the same deploy plans the
// same tree again, so a repeated report writes the same.
func (s *Service) onBuildDetected(ctx context.Context, tx Tx, d *deploy.Deploy, b *zonev1.BuildPlan) error {
	if d.Kind != deploy.KindSource || b.GetDetected() == "" || b.GetStart() == "" {
		s.log.WarnContext(ctx, "a build report that does not apply", "deploy", d.ID, "kind", string(d.Kind))
		return nil
	}
	return tx.SetBuild(ctx, d.ID, deploy.Build{Detected: b.GetDetected(), Command: b.GetCommand(), Start: b.GetStart()})
}
