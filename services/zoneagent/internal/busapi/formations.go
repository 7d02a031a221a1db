package busapi

import (
	"context"
	"fmt"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// formationsQueue takes the app's scalings, apart from the revisions' commands: a scaling
// never waits behind a deploy.
func formationsQueue(zone string) string { return "zoneagent." + zone + ".formations" }

// formationHandler records a ScaleFormation and, once committed, has the runner run it.
func formationHandler(a *usecase.Agent) bus.TxHandler {
	return func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
		var c zonev1.ScaleFormation
		if err := d.Decode(&c); err != nil {
			return bus.Permanent(err)
		}
		if err := requireIDs(c.GetAppId(), c.GetDeployId()); err != nil {
			return err
		}
		f := formationFrom(c.GetFormation(), c.GetFormationGeneration())
		for ptype, q := range f.Quantities {
			if !revision.ValidProcessName(ptype) || q < 0 {
				return bus.Permanent(fmt.Errorf("%w: formation %s=%d", revision.ErrInvalid, ptype, q))
			}
		}
		newer, err := a.ScaleFormation(ctx, store.Bind(tx), c.GetAppId(), c.GetDeployId(), f)
		if err != nil || !newer {
			return err
		}
		appID, deployID := c.GetAppId(), c.GetDeployId()
		// Starting instances takes a while (web ones answer a health check first): it runs
		// after the commit, outside the consumer.
		tx.AfterCommit(func() {
			go func() {
				ctx := context.WithoutCancel(ctx)
				if err := a.ApplyFormation(ctx, appID, deployID, f); err != nil {
					a.Logger().WarnContext(ctx, "scale an app's formation", "app", appID, "deploy", deployID, "err", err.Error())
				}
			}()
		})
		return nil
	}
}

// formationFrom is a command's formation: a quantity per type.
func formationFrom(qs []*zonev1.ProcessQuantity, generation int64) revision.Formation {
	f := revision.Formation{Generation: generation}
	for _, q := range qs {
		if f.Quantities == nil {
			f.Quantities = map[string]int64{}
		}
		f.Quantities[q.GetType()] = q.GetQuantity()
	}
	return f
}
