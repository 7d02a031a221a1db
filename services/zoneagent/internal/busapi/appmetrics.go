package busapi

import (
	"context"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/usecase"
)

// PublishAppMetrics writes one customer metrics report (an edge's request counts, the
// runtime's instance use) to the zone's outbox, which the runtime relays on zone.app.metrics.
func PublishAppMetrics(s usecase.Store) func(ctx context.Context, m *zonev1.AppMetrics) error {
	return func(ctx context.Context, m *zonev1.AppMetrics) error {
		return s.InTx(ctx, func(tx usecase.Tx) error { return tx.Publish(ctx, zonebus.KeyAppMetrics, m) })
	}
}
