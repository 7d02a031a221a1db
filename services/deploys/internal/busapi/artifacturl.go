package busapi

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// ArtifactURL answers deploys.rpc.artifact_url for a zone's agent: a presigned GET of the
// artifact of a deploy that zone hosts. The zone is the request's publisher (the broker
// checks it), never a field the zone could fill in with another's name.
func ArtifactURL(svc *usecase.Service) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		zone, ok := bus.ZoneOf(d.Publisher)
		if !ok {
			return nil, bus.Reject(bus.CodeForbidden, "only a zone fetches artifacts")
		}
		var req deploysv1.ArtifactURLRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable ArtifactURLRequest")
		}
		url, expires, err := svc.ArtifactURL(ctx, zone, req.GetAppId(), req.GetDeployId())
		switch {
		case errors.Is(err, deploy.ErrNotHosted):
			return nil, bus.Reject(bus.CodeForbidden, "this zone does not host that deploy")
		case errors.Is(err, deploy.ErrNoArtifact):
			return nil, bus.Reject("not_found", "that deploy has no artifact")
		case err != nil:
			return nil, err
		}
		return &deploysv1.ArtifactURLReply{Url: url, ExpiresAt: timestamppb.New(expires)}, nil
	}
}
