package busapi

import (
	"context"
	"maps"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/deploys/internal/deploy"
)

// AppsEnv takes and compares environment snapshots over request/reply with the apps service.
type AppsEnv struct{ conn *bus.Conn }

// NewAppsEnv uses conn for the requests.
func NewAppsEnv(conn *bus.Conn) AppsEnv { return AppsEnv{conn: conn} }

// Snapshot implements app.EnvSource.
func (a AppsEnv) Snapshot(ctx context.Context, appID, deployID string) (deploy.Snapshot, error) {
	var reply appsv1.EnvSnapshotReply
	if err := a.conn.Request(ctx, appsbus.QueueEnvSnapshot, &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: deployID}, &reply); err != nil {
		return deploy.Snapshot{}, err
	}
	return deploy.Snapshot{Sealed: reply.GetSealed(), KeyID: reply.GetKeyId(), For: deployID}, nil
}

// Same implements app.EnvSource by opening both snapshots; the variables never leave
// this function.
func (a AppsEnv) Same(ctx context.Context, appID string, x, y deploy.Snapshot) (bool, error) {
	vx, err := a.open(ctx, appID, x)
	if err != nil {
		return false, err
	}
	vy, err := a.open(ctx, appID, y)
	if err != nil {
		return false, err
	}
	return maps.Equal(vx, vy), nil
}

func (a AppsEnv) open(ctx context.Context, appID string, s deploy.Snapshot) (map[string]string, error) {
	var reply appsv1.EnvOpenReply
	req := &appsv1.EnvOpenRequest{AppId: appID, DeployId: s.For, Sealed: s.Sealed, KeyId: s.KeyID}
	if err := a.conn.Request(ctx, appsbus.QueueEnvOpen, req, &reply); err != nil {
		return nil, err
	}
	return reply.GetVars(), nil
}
