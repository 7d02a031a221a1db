package busapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/usecase"
)

// TeamBilling puts new teams on a plan and ends deleted teams' subscriptions;
// *usecase.Service is one.
type TeamBilling interface {
	RegisterTeam(ctx context.Context, tx usecase.Tx, teamID, creatorID uuid.UUID, personal bool) error
	TeamDeleted(ctx context.Context, tx usecase.Tx, teamID uuid.UUID) error
}

// TeamsSubscription is billing's durable consumer of identity's team.created and
// team.deleted, each handled in the consumer's transaction (bind is store.Bind), so its
// effects commit with the record that the message was processed.
func TeamsSubscription(b TeamBilling, bind func(bus.Tx) usecase.Tx) bus.Subscription {
	return bus.Subscription{
		Queue:  TeamsQueue,
		Keys:   []string{identitybus.KeyTeamCreated, identitybus.KeyTeamDeleted},
		Handle: HandleTeams(b, bind),
	}
}

// HandleTeams handles one team fact. A message that can never be handled (undecodable, or an
// id that is not a UUID) is dead-lettered at once rather than retried.
func HandleTeams(b TeamBilling, bind func(bus.Tx) usecase.Tx) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		switch d.RoutingKey {
		case identitybus.KeyTeamCreated:
			var m identityv1.TeamCreated
			if err := d.Decode(&m); err != nil {
				return bus.Permanent(fmt.Errorf("decode team.created: %w", err))
			}
			team, err := accounts.ParseID(m.GetTeamId())
			if err != nil {
				return bus.Permanent(fmt.Errorf("team.created for %q: %w", m.GetTeamId(), err))
			}
			creator, err := accounts.ParseID(m.GetOwnerAccountId())
			if err != nil && !m.GetPersonal() {
				return bus.Permanent(fmt.Errorf("team.created by %q: %w", m.GetOwnerAccountId(), err))
			}
			return b.RegisterTeam(ctx, bind(tx), team, creator, m.GetPersonal())
		case identitybus.KeyTeamDeleted:
			var m identityv1.TeamDeleted
			if err := d.Decode(&m); err != nil {
				return bus.Permanent(fmt.Errorf("decode team.deleted: %w", err))
			}
			team, err := accounts.ParseID(m.GetTeamId())
			if err != nil {
				return bus.Permanent(fmt.Errorf("team.deleted for %q: %w", m.GetTeamId(), err))
			}
			return b.TeamDeleted(ctx, bind(tx), team)
		}
		return bus.Permanent(fmt.Errorf("billing.teams: unexpected routing key %q", d.RoutingKey))
	}
}
