package busapi

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/usecase"
)

// AppLookup answers apps.rpc.app: whether the account owns a live app of that slug, for a
// service whose copy has not yet received apps.app.created. Only the owner's account finds
// it; any other answer is the empty reply, which never tells a foreign app from none.
func AppLookup(svc *usecase.Apps) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req appsv1.AppLookupRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable AppLookupRequest")
		}
		found, err := svc.Lookup(ctx, req.GetAccountId(), req.GetSlug())
		if errors.Is(err, apps.ErrNotFound) {
			return &appsv1.AppLookupReply{}, nil
		}
		if err != nil {
			return nil, err
		}
		return &appsv1.AppLookupReply{App: found}, nil
	}
}
