// Package events is the zone agent's side of the bus: the commands the deploys service sends
// to this zone and the apps' deletes.
package events

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/agent"
	"tori.dev/services/zoneagent/internal/store"
)

// The apps service's events the zone follows.
const (
	KeyAppDeleted      = "apps.app.deleted"
	KeyDomainActivated = "apps.domain.activated"
	KeyDomainRemoved   = "apps.domain.removed"
)

// CommandKey is the routing key of a command to zone.
func CommandKey(zone, command string) string { return "zone." + zone + "." + command }

// Subscriptions are the zone's durable consumers; their queues carry the zone id, so every
// zone has its own.
func Subscriptions(a *agent.Agent) []bus.Subscription {
	z := a.Zone
	return []bus.Subscription{
		{
			Queue:  "zoneagent." + z + ".commands",
			Keys:   []string{CommandKey(z, "deploy"), CommandKey(z, "activate"), CommandKey(z, "discard")},
			Handle: commandHandler(a),
		},
		{Queue: "zoneagent." + z + ".apps", Keys: []string{KeyAppDeleted, KeyDomainActivated, KeyDomainRemoved}, Handle: appsHandler(a)},
	}
}

// commandHandler only records the command; the worker does the slow part outside the
// consumer's transaction.
func commandHandler(a *agent.Agent) bus.TxHandler {
	return func(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
		t := store.WithTx(tx)
		defer a.Poke()
		switch d.RoutingKey {
		case CommandKey(a.Zone, "deploy"):
			var c zonev1.StartRevision
			if err := d.Decode(&c); err != nil {
				return bus.Permanent(err)
			}
			_, err := t.AddRevision(ctx, revisionFrom(&c))
			return err
		case CommandKey(a.Zone, "activate"):
			var c zonev1.ActivateRevision
			if err := d.Decode(&c); err != nil {
				return bus.Permanent(err)
			}
			return t.Want(ctx, c.GetDeployId(), true)
		case CommandKey(a.Zone, "discard"):
			var c zonev1.DiscardRevision
			if err := d.Decode(&c); err != nil {
				return bus.Permanent(err)
			}
			return t.Want(ctx, c.GetDeployId(), false)
		}
		return nil
	}
}

func appsHandler(a *agent.Agent) bus.TxHandler {
	return func(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
		defer a.Poke()
		switch d.RoutingKey {
		case KeyDomainActivated:
			var ev appsv1.DomainActivated
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			return store.WithTx(tx).SetDomain(ctx, ev.GetHostname(), ev.GetAppId())
		case KeyDomainRemoved:
			var ev appsv1.DomainRemoved
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			return store.WithTx(tx).RemoveDomain(ctx, ev.GetHostname(), ev.GetAppId())
		}
		var ev appsv1.AppDeleted
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		// Serving stops before the record commits: the delete is a fact, and stopping twice
		// on a redelivery is harmless.
		if err := a.ForgetApp(ctx, ev.GetAppId()); err != nil {
			return err
		}
		return store.WithTx(tx).DeleteApp(ctx, ev.GetAppId())
	}
}

func revisionFrom(c *zonev1.StartRevision) store.Revision {
	var deadline *time.Time
	if c.GetDeadline() != nil {
		t := c.GetDeadline().AsTime()
		deadline = &t
	}
	return store.Revision{
		DeployID: c.GetDeployId(), AppID: c.GetAppId(), Slug: c.GetSlug(), Kind: c.GetKind(), ArtifactKey: c.GetArtifactKey(),
		Image: c.GetImage(), Release: c.GetRelease(), ReleaseGiven: c.GetReleaseGiven(), EnvSealed: c.GetEnvSealed(),
		EnvKeyID: c.GetEnvKeyId(), EnvDeployID: c.GetEnvDeployId(), BuildMinutes: c.GetBuildMinutes(),
		MinScale: c.GetMinScale(), CPU: c.GetCpu(), Deadline: deadline,
	}
}
