package usecase

import (
	"context"
	"log/slog"

	"google.golang.org/protobuf/types/known/timestamppb"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// Scale reports that a service napped or woke, for the app's status.
type Scale struct {
	Store Store
	Zone  string
	Log   *slog.Logger
}

// Changed publishes the change. The request or nap pass that caused it may end at once; the
// report still goes out.
func (s Scale) Changed(ctx context.Context, appID string, napping bool) {
	key := zonebus.KeyAppWoken
	if napping {
		key = zonebus.KeyAppNapping
	}
	ctx = context.WithoutCancel(ctx)
	err := s.Store.InTx(ctx, func(tx Tx) error {
		return tx.Publish(ctx, key, &zonev1.AppScaleChanged{AppId: appID, Zone: s.Zone, Napping: napping, At: timestamppb.Now()})
	})
	if err != nil {
		s.Log.WarnContext(ctx, "publish scale change", "app", appID, "err", err.Error())
	}
}
