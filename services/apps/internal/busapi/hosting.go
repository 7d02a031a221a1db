package busapi

import (
	"context"

	"tori.dev/pkg/bus"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
)

// Hosting asks the deploys service whether a zone hosts a deploy (deploys.rpc.hosting); it
// implements usecase.HostingChecker.
type Hosting struct{ Bus *bus.Conn }

// Hosts implements usecase.HostingChecker.
func (h Hosting) Hosts(ctx context.Context, zone, appID, deployID string) (string, bool, error) {
	var reply deploysv1.HostingReply
	req := &deploysv1.HostingRequest{AppId: appID, DeployId: deployID, Zone: zone}
	if err := h.Bus.Request(ctx, deploysbus.QueueHosting, req, &reply); err != nil {
		return "", false, err
	}
	return reply.GetEnvDeployId(), reply.GetHosted(), nil
}
