package busapi

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/usecase"
)

// Revisions keeps each app's status, currentDeployId and framework following its deploys
// and its zone, on the durable queue apps.revisions.
func (c Consumers) Revisions() bus.Subscription {
	return bus.Subscription{
		Queue:  QueueRevisions,
		Keys:   []string{deploysbus.KeyDeployLive, deploysbus.KeyDeployStatusChanged, zonebus.KeyAppNapping, zonebus.KeyAppWoken},
		Handle: c.HandleRevision,
	}
}

// HandleRevision applies one deploy or zone event in tx.
func (c Consumers) HandleRevision(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	appID, ev, ok, err := revisionEvent(d)
	if err != nil {
		return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
	}
	if !ok {
		return nil
	}
	return usecase.ApplyRevision(ctx, c.Tx(tx), appID, ev, time.Now().UTC())
}

// revisionEvent translates a message into the domain's terms; ok is false for a fact that
// does not move the app (a deploy entering releasing, a superseded one).
func revisionEvent(d bus.Delivery) (appID string, ev apps.RevisionEvent, ok bool, err error) {
	at := func(ts *timestamppb.Timestamp) time.Time {
		if ts == nil {
			return time.Now().UTC()
		}
		return ts.AsTime()
	}
	switch d.RoutingKey {
	case deploysbus.KeyDeployLive:
		var m deploysv1.DeployLive
		if err := d.Decode(&m); err != nil {
			return "", ev, false, err
		}
		return m.GetAppId(), apps.RevisionEvent{Kind: apps.DeployWentLive, DeployID: m.GetDeployId(), At: at(m.GetLiveAt()),
			Framework: m.GetFramework()}, true, nil
	case deploysbus.KeyDeployStatusChanged:
		var m deploysv1.DeployStatusChanged
		if err := d.Decode(&m); err != nil {
			return "", ev, false, err
		}
		ev := apps.RevisionEvent{DeployID: m.GetDeployId(), At: at(m.GetChangedAt()), AppHasLiveDeploy: m.GetAppHasLiveDeploy()}
		switch m.GetStatus() {
		case "building":
			ev.Kind = apps.DeployStarted
		case "failed", "cancelled":
			ev.Kind = apps.DeployEnded
		default:
			return "", ev, false, nil
		}
		return m.GetAppId(), ev, true, nil
	case zonebus.KeyAppNapping, zonebus.KeyAppWoken:
		var m zonev1.AppScaleChanged
		if err := d.Decode(&m); err != nil {
			return "", ev, false, err
		}
		kind := apps.AppWoke
		if m.GetNapping() {
			kind = apps.AppNapped
		}
		return m.GetAppId(), apps.RevisionEvent{Kind: kind, At: at(m.GetAt())}, true, nil
	}
	return "", ev, false, nil
}
