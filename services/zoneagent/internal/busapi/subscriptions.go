// Package busapi is the zone agent's side of the bus: the commands the deploys service sends
// to this zone and the apps' events it follows, each handed to its use case; the log batches
// it publishes; and its request to open an environment snapshot.
package busapi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// The zone's own durable queues; they carry the zone id, so every zone has its own.
func commandsQueue(zone string) string { return "zoneagent." + zone + ".commands" }
func appsQueue(zone string) string     { return "zoneagent." + zone + ".apps" }
func holdsQueue(zone string) string    { return "zoneagent." + zone + ".holds" }

// Subscriptions are the zone's durable consumers.
func Subscriptions(a *usecase.Agent) []bus.Subscription {
	z := a.Zone()
	return []bus.Subscription{
		{
			Queue: commandsQueue(z),
			Keys: []string{
				zonebus.CommandKey(z, zonebus.CommandDeploy),
				zonebus.CommandKey(z, zonebus.CommandActivate),
				zonebus.CommandKey(z, zonebus.CommandDiscard),
				zonebus.CommandKey(z, zonebus.CommandPreviewRemove), // previews.go
			},
			Handle: pokeAfterCommit(a, commandHandler(a)),
		},
		{
			Queue:  formationsQueue(z),
			Keys:   []string{zonebus.CommandKey(z, zonebus.CommandFormation)},
			Handle: formationHandler(a),
		},
		{
			Queue:  holdsQueue(z),
			Keys:   []string{billingbus.KeyHoldChanged},
			Handle: pokeAfterCommit(a, holdsHandler(a)),
		},
		{
			Queue:  appsQueue(z),
			Keys:   []string{appsbus.KeyAppDeleted, appsbus.KeyDomainActivated, appsbus.KeyDomainRemoved, appsbus.KeyDomainDeactivated},
			Handle: pokeAfterCommit(a, appsHandler(a)),
		},
	}
}

// commandHandler only records the command; the worker does the slow part outside the
// consumer's transaction.
func commandHandler(a *usecase.Agent) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		t := store.Bind(tx)
		switch d.RoutingKey {
		case zonebus.CommandKey(a.Zone(), zonebus.CommandDeploy):
			var c zonev1.StartRevision
			if err := d.Decode(&c); err != nil {
				return bus.Permanent(err)
			}
			rev := revisionFrom(&c)
			if err := rev.Check(); err != nil {
				return bus.Permanent(err)
			}
			if c.GetAccountId() != "" {
				if err := a.NoteAccount(ctx, t, rev.AppID, c.GetAccountId()); err != nil {
					return err
				}
			}
			return a.StartRevision(ctx, t, rev)
		case zonebus.CommandKey(a.Zone(), zonebus.CommandActivate):
			var c zonev1.ActivateRevision
			if err := d.Decode(&c); err != nil {
				return bus.Permanent(err)
			}
			if err := requireIDs(c.GetDeployId()); err != nil {
				return err
			}
			if c.GetPreviewId() != "" {
				return activatePreview(ctx, a, t, &c) // previews.go
			}
			return a.ActivateRevision(ctx, t, c.GetAppId(), c.GetDeployId(), formationFrom(c.GetFormation(), c.GetFormationGeneration()))
		case zonebus.CommandKey(a.Zone(), zonebus.CommandDiscard):
			var c zonev1.DiscardRevision
			if err := d.Decode(&c); err != nil {
				return bus.Permanent(err)
			}
			if err := requireIDs(c.GetDeployId()); err != nil {
				return err
			}
			return a.DiscardRevision(ctx, t, c.GetDeployId())
		case zonebus.CommandKey(a.Zone(), zonebus.CommandPreviewRemove):
			return removePreview(ctx, a, t, d) // previews.go
		}
		return nil
	}
}

// pokeAfterCommit has h's delivery wake the agent's worker once the consumer's transaction
// has committed what h recorded.
func pokeAfterCommit(a *usecase.Agent, h bus.TxHandler) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		tx.AfterCommit(a.Poke)
		return h(ctx, tx, d)
	}
}

// holdsHandler keeps each account's payment-failure hold; the edge pauses the account's apps
// from the hold's serving_stops_from.
func holdsHandler(a *usecase.Agent) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		var ev billingv1.AccountHoldChanged
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		if err := requireIDs(ev.GetAccountId()); err != nil {
			return err
		}
		var stopsFrom *time.Time
		if ev.GetActive() && ev.GetServingStopsFrom() != nil {
			t := ev.GetServingStopsFrom().AsTime()
			stopsFrom = &t
		}
		return a.HoldChanged(ctx, store.Bind(tx), ev.GetAccountId(), stopsFrom, ev.GetVersion())
	}
}

func appsHandler(a *usecase.Agent) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		t := store.Bind(tx)
		switch d.RoutingKey {
		case appsbus.KeyDomainActivated:
			var ev appsv1.DomainActivated
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			if err := requireIDs(ev.GetAppId()); err != nil {
				return err
			}
			return a.DomainActivated(ctx, t, ev.GetHostname(), ev.GetAppId(), eventTime(ev.GetActivatedAt()))
		case appsbus.KeyDomainRemoved:
			var ev appsv1.DomainRemoved
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			if err := requireIDs(ev.GetAppId()); err != nil {
				return err
			}
			return a.DomainRemoved(ctx, t, ev.GetHostname(), ev.GetAppId(), eventTime(ev.GetRemovedAt()))
		case appsbus.KeyDomainDeactivated:
			var ev appsv1.DomainDeactivated
			if err := d.Decode(&ev); err != nil {
				return bus.Permanent(err)
			}
			if uuid.Validate(ev.GetAppId()) != nil || ev.GetHostname() == "" {
				return bus.Permanent(fmt.Errorf("domain deactivated %s: no valid app id or hostname", d.ID))
			}
			return a.DomainDeactivated(ctx, t, ev.GetHostname(), ev.GetAppId(), eventTime(ev.GetDeactivatedAt()))
		}
		var ev appsv1.AppDeleted
		if err := d.Decode(&ev); err != nil {
			return bus.Permanent(err)
		}
		if err := requireIDs(ev.GetAppId()); err != nil {
			return err
		}
		return a.DeleteApp(ctx, t, ev.GetAppId(), eventTime(ev.GetDeletedAt()))
	}
}

// eventTime is when the apps service says a change happened, which orders the changes to one
// hostname whatever order their events arrive in. An event without one (none is published
// so) counts as happening now.
func eventTime(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Now()
	}
	return ts.AsTime()
}

// requireIDs refuses, for good, a command missing an id it needs: Decode has already
// refused any id that is not a UUID, and an empty one would name a parent folder.
func requireIDs(ids ...string) error {
	for _, id := range ids {
		if !revision.ValidID(id) {
			return bus.Permanent(fmt.Errorf("%w: a required id is missing", revision.ErrInvalid))
		}
	}
	return nil
}

func revisionFrom(c *zonev1.StartRevision) revision.Revision {
	var deadline *time.Time
	if c.GetDeadline() != nil {
		t := c.GetDeadline().AsTime()
		deadline = &t
	}
	return revision.Revision{
		DeployID: c.GetDeployId(), AppID: c.GetAppId(), Slug: c.GetSlug(), Kind: revision.Kind(c.GetKind()),
		ArtifactKey: c.GetArtifactKey(), Image: c.GetImage(), Release: c.GetRelease(), ReleaseGiven: c.GetReleaseGiven(),
		EnvSealed: c.GetEnvSealed(), EnvKeyID: c.GetEnvKeyId(), EnvDeployID: c.GetEnvDeployId(),
		BuildMinutes: c.GetBuildMinutes(), MinScale: c.GetMinScale(), CPU: c.GetCpu(), Deadline: deadline,
		ClearCache: c.GetClearCache(), Processes: processesFrom(c.GetProcesses()), InstanceMemoryBytes: c.GetInstanceMemoryBytes(),
		PreviewID: c.GetPreviewId(), BuiltFromDeployID: c.GetBuiltFromDeployId(),
	}
}

// processesFrom is an image deploy's declarations as they came: a bad name is not refused
// here but fails the deploy invalid_artifact when the zone prepares it (usecase.prepare),
// so the control plane hears why.
func processesFrom(ps []*zonev1.ProcessType) []revision.Process {
	var out []revision.Process
	for _, p := range ps {
		out = append(out, revision.Process{Name: p.GetName(), Command: p.GetCommand()})
	}
	return out
}
