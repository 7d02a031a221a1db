package busapi

import (
	"context"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// Hosting answers deploys.rpc.hosting for the apps service (serve it behind
// bus.OnlyFrom(bus.Is(bus.PrincipalApps), …)): does this zone host this deploy now?
func Hosting(svc *usecase.Service) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req deploysv1.HostingRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable HostingRequest")
		}
		env, hosted, err := svc.Hosting(ctx, req.GetZone(), req.GetAppId(), req.GetDeployId())
		if err != nil {
			return nil, err
		}
		return &deploysv1.HostingReply{Hosted: hosted, EnvDeployId: env}, nil
	}
}
