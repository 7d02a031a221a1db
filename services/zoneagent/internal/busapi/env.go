package busapi

import (
	"context"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/zoneagent/internal/revision"
)

// EnvOpener opens snapshots over request/reply: the plaintext arrives in a transient reply
// and lives only in the agent's memory and the process's environment.
type EnvOpener struct{ Conn *bus.Conn }

// Open implements runner.EnvOpener.
func (e EnvOpener) Open(ctx context.Context, rev revision.Revision) (map[string]string, error) {
	var reply appsv1.EnvOpenReply
	req := &appsv1.EnvOpenRequest{AppId: rev.AppID, DeployId: rev.EnvDeployID, Sealed: rev.EnvSealed, KeyId: rev.EnvKeyID, RevisionDeployId: rev.DeployID}
	if req.DeployId == "" {
		req.DeployId = rev.DeployID
	}
	if err := e.Conn.Request(ctx, appsbus.QueueEnvOpen, req, &reply); err != nil {
		return nil, err
	}
	return reply.GetVars(), nil
}
