package busapi

import (
	"context"
	"fmt"

	"tori.dev/contract/names"
	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// requirePreviewID refuses, for good, a command without a valid preview id.
func requirePreviewID(id string) error {
	if !names.ValidPreviewID(id) {
		return bus.Permanent(fmt.Errorf("%w: not a preview id", revision.ErrInvalid))
	}
	return nil
}

// activatePreview records an ActivateRevision for a preview: its formation is ignored.
func activatePreview(ctx context.Context, a *usecase.Agent, t store.Tx, c *zonev1.ActivateRevision) error {
	if err := requirePreviewID(c.GetPreviewId()); err != nil {
		return err
	}
	return a.ActivatePreview(ctx, t, c.GetDeployId(), c.GetPreviewId())
}

// removePreview handles zone.<zone>.preview_remove.
func removePreview(ctx context.Context, a *usecase.Agent, t store.Tx, d bus.Delivery) error {
	var c zonev1.RemovePreview
	if err := d.Decode(&c); err != nil {
		return bus.Permanent(err)
	}
	if err := requireIDs(c.GetAppId()); err != nil {
		return err
	}
	if err := requirePreviewID(c.GetPreviewId()); err != nil {
		return err
	}
	return a.RemovePreview(ctx, t, c.GetAppId(), c.GetPreviewId(), c.GetReason())
}
