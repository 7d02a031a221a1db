package busapi

import (
	"context"

	"tori.dev/pkg/bus"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
)

// ArtifactURLs asks the deploys service over request/reply for the URL of a deploy's
// artifact (artifact.URLIssuer). deploys answers only the zone hosting the deploy, which it
// knows from the request's publisher.
type ArtifactURLs struct{ Conn *bus.Conn }

// ArtifactURL implements artifact.URLIssuer.
func (a ArtifactURLs) ArtifactURL(ctx context.Context, appID, deployID string) (string, error) {
	var reply deploysv1.ArtifactURLReply
	if err := a.Conn.Request(ctx, deploysbus.QueueArtifactURL, &deploysv1.ArtifactURLRequest{AppId: appID, DeployId: deployID}, &reply); err != nil {
		return "", err
	}
	return reply.GetUrl(), nil
}
