package usecase

// The events each change publishes are decided here, in the use cases; the store only writes
// them to the outbox in the change's transaction.

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
)

func (s *Service) publishCreated(ctx context.Context, tx Tx, d *deploy.Deploy) error {
	return tx.Publish(ctx, deploysbus.KeyDeployCreated, &deploysv1.DeployCreated{
		DeployId: d.ID, AppId: d.AppID, AccountId: d.AccountID, Kind: string(d.Kind),
		RollbackOf: d.RollbackOf, CreatedAt: timestamppb.New(d.CreatedAt),
	})
}

// saveTransition persists d after a transition from prev and publishes the fact.
func (s *Service) saveTransition(ctx context.Context, tx Tx, d *deploy.Deploy, prev deploy.Status, appHasLive bool) error {
	if err := tx.Update(ctx, d); err != nil {
		return err
	}
	return tx.Publish(ctx, deploysbus.KeyDeployStatusChanged, &deploysv1.DeployStatusChanged{
		DeployId: d.ID, AppId: d.AppID, AccountId: d.AccountID, Status: string(d.Status),
		PreviousStatus: string(prev), Error: d.Error, AppHasLiveDeploy: appHasLive,
		ChangedAt: timestamppb.New(d.UpdatedAt),
	})
}

// revisionOptions are what a StartRevision carries besides the deploy's record: whether the
// release command came with the deploy (it then wins over the manifest's), and whether the
// request asked for a build from an empty cache (clearCache). Only the request that asked
// clears the cache: a rollback or a plan redeploy builds with the cache as it is.
type revisionOptions struct {
	releaseGiven bool
	clearCache   bool
	// declarationsOf names the deploy whose process declarations the new one starts with (a
	// rollback's target); "" for none.
	declarationsOf string
	// builtFrom names the revision a promote's zone may reuse (a preview's, when it ran with
	// no overrides); "" for none.
	builtFrom string
}

// startRevision tells the app's zone to prepare the deploy's revision.
func (s *Service) startRevision(ctx context.Context, tx Tx, app App, plan Plan, d *deploy.Deploy, opts revisionOptions) error {
	msg := &zonev1.StartRevision{
		DeployId: d.ID, AppId: d.AppID, AccountId: app.AccountID, Slug: app.Slug, Kind: string(d.Kind), ArtifactKey: d.ArtifactKey,
		Image: d.Image, Release: d.Release, EnvSealed: d.Env.Sealed, EnvKeyId: d.Env.KeyID, EnvDeployId: d.Env.For, BuildMinutes: plan.BuildMinutes,
		MinScale: plan.MinScale, Cpu: plan.CPU, Deadline: timestamppb.New(d.DeadlineAt()), ReleaseGiven: opts.releaseGiven,
		ClearCache: opts.clearCache, Processes: processTypes(d.Processes), InstanceMemoryBytes: plan.InstanceMemoryBytes,
		PreviewId: d.PreviewID, BuiltFromDeployId: opts.builtFrom,
	}
	if d.PreviewID != "" {
		// A preview runs no release job (nor the manifest's): a release migrates the app's
		// database, which a preview must not touch, and one without the database would fail.
		// The release runs when the preview is promoted; the row keeps it for that.
		msg.Release, msg.ReleaseGiven = nil, true
	}
	return tx.Publish(ctx, zonebus.CommandKey(app.Zone, zonebus.CommandDeploy), msg)
}

func processTypes(ps []deploy.Process) []*zonev1.ProcessType {
	if len(ps) == 0 {
		return nil
	}
	out := make([]*zonev1.ProcessType, 0, len(ps))
	for _, p := range ps {
		out = append(out, &zonev1.ProcessType{Name: p.Name, Command: p.Command})
	}
	return out
}

// activate tells the zone to switch to the revision; a service's carries the formation it
// runs once live, computed and saved in this transaction (activationFormation).
func (s *Service) activate(ctx context.Context, tx Tx, app App, d *deploy.Deploy) error {
	msg := &zonev1.ActivateRevision{DeployId: d.ID, AppId: d.AppID, Slug: app.Slug}
	if app.Kind == "service" && d.Kind != deploy.KindStatic {
		st, f, err := s.activationFormation(ctx, tx, app, d)
		if err != nil {
			return err
		}
		msg.Formation, msg.FormationGeneration = quantities(f), st.Generation
	}
	return tx.Publish(ctx, zonebus.CommandKey(app.Zone, zonebus.CommandActivate), msg)
}

func (s *Service) discard(ctx context.Context, tx Tx, app App, d *deploy.Deploy) error {
	if app.Zone == "" {
		return nil // an app known only from its tombstone: no zone ever got the revision
	}
	return tx.Publish(ctx, zonebus.CommandKey(app.Zone, zonebus.CommandDiscard), &zonev1.DiscardRevision{DeployId: d.ID, AppId: d.AppID})
}

func (s *Service) publishLive(ctx context.Context, tx Tx, d *deploy.Deploy, superseded string) error {
	return tx.Publish(ctx, deploysbus.KeyDeployLive, &deploysv1.DeployLive{
		DeployId: d.ID, AppId: d.AppID, AccountId: d.AccountID, SupersededDeployId: superseded,
		LiveAt: timestamppb.New(*d.LiveAt), Framework: string(d.Framework),
	})
}

func (s *Service) publishCleaned(ctx context.Context, tx Tx, appID string, at time.Time) error {
	return tx.Publish(ctx, deploysbus.KeyAppCleaned, &appsv1.AppCleanupConfirmed{AppId: appID, Service: "deploys", ConfirmedAt: timestamppb.New(at)})
}
