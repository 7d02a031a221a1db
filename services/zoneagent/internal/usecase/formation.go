package usecase

import (
	"context"
	"log/slog"

	"google.golang.org/protobuf/types/known/timestamppb"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
)

// ScaleFormation records formation f for the app's revision deployID; it reports whether f
// is newer than the one kept (then ApplyFormation runs it, once this is committed). A
// revision not live yet keeps f for its activation.
func (a *Agent) ScaleFormation(ctx context.Context, tx Tx, appID, deployID string, f revision.Formation) (bool, error) {
	return tx.SetFormation(ctx, appID, deployID, f)
}

// ApplyFormation has the runner run formation f when deployID is the app's live revision
// on record; a revision not live yet takes it when activated.
func (a *Agent) ApplyFormation(ctx context.Context, appID, deployID string, f revision.Formation) error {
	if a.runner == nil {
		return nil
	}
	// An activation runs within a pass: read between passes, the live revision on record is
	// the one the runner runs, and a formation sent while its revision was being activated
	// is not lost between the activation's read of the formation and its commit. The
	// instances start outside the pass (a web one may take a while to answer); a revision
	// activated meanwhile makes the runner ignore this formation.
	a.passMu.Lock()
	live := false
	err := a.store.InTx(ctx, func(tx Tx) error {
		r, ok, err := tx.Live(ctx, appID)
		live = ok && r.DeployID == deployID && !r.Kind.Static()
		return err
	})
	a.passMu.Unlock()
	if err != nil || !live {
		return err
	}
	return a.runner.Scale(ctx, appID, deployID, f)
}

// Formations reports how many instances of each process type of an app's live revision run.
type Formations struct {
	Store Store
	Zone  string
	Log   *slog.Logger
}

// Changed publishes the counts (FormationStatus). The change that caused it may have no
// context of its own; the report still goes out.
func (s Formations) Changed(ctx context.Context, appID, deployID string, running []revision.ProcessRunning) {
	msg := &zonev1.FormationStatus{AppId: appID, Zone: s.Zone, DeployId: deployID, At: timestamppb.Now()}
	for _, r := range running {
		msg.Processes = append(msg.Processes, &zonev1.ProcessRunning{Type: r.Type, Running: r.Running})
	}
	ctx = context.WithoutCancel(ctx)
	err := s.Store.InTx(ctx, func(tx Tx) error { return tx.Publish(ctx, zonebus.KeyFormationChanged, msg) })
	if err != nil {
		s.Log.WarnContext(ctx, "publish formation status", "app", appID, "err", err.Error())
	}
}

// Logger is the agent's logger, for the work its consumers leave for after a commit.
func (a *Agent) Logger() *slog.Logger { return a.log }
