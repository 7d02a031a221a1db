package busapi

import (
	"context"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/deploys/internal/deploy"
)

// AppsEnv takes and compares environment snapshots over request/reply with the apps service.
type AppsEnv struct{ conn *bus.Conn }

// NewAppsEnv uses conn for the requests.
func NewAppsEnv(conn *bus.Conn) AppsEnv { return AppsEnv{conn: conn} }

// Snapshot implements usecase.EnvSource.
func (a AppsEnv) Snapshot(ctx context.Context, appID, deployID string) (deploy.Snapshot, error) {
	var reply appsv1.EnvSnapshotReply
	if err := a.conn.Request(ctx, appsbus.QueueEnvSnapshot, &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: deployID}, &reply); err != nil {
		return deploy.Snapshot{}, err
	}
	return deploy.Snapshot{Sealed: reply.GetSealed(), KeyID: reply.GetKeyId(), For: deployID}, nil
}

// Same implements usecase.EnvSource: the apps service compares the two snapshots, so no value
// ever reaches this service.
func (a AppsEnv) Same(ctx context.Context, appID string, x, y deploy.Snapshot) (bool, error) {
	sealed := func(s deploy.Snapshot) *appsv1.SealedEnv {
		return &appsv1.SealedEnv{DeployId: s.For, Sealed: s.Sealed, KeyId: s.KeyID}
	}
	var reply appsv1.EnvSameReply
	req := &appsv1.EnvSameRequest{AppId: appID, A: sealed(x), B: sealed(y)}
	if err := a.conn.Request(ctx, appsbus.QueueEnvSame, req, &reply); err != nil {
		return false, err
	}
	return reply.GetSame(), nil
}

// PreviewSnapshot implements usecase.PreviewEnvSource: the apps service sets the overrides
// over the app's variables, adds TORI_PREVIEW=1 and leaves the database variables out when
// asked. The overrides cross the bus only in this transient request.
func (a AppsEnv) PreviewSnapshot(ctx context.Context, appID, deployID string, overrides map[string]string, withoutDatabase bool) (deploy.Snapshot, error) {
	var reply appsv1.EnvSnapshotReply
	req := &appsv1.EnvSnapshotRequest{AppId: appID, DeployId: deployID, Overrides: overrides, Preview: true, WithoutDatabase: withoutDatabase}
	if err := a.conn.Request(ctx, appsbus.QueueEnvSnapshot, req, &reply); err != nil {
		return deploy.Snapshot{}, err
	}
	return deploy.Snapshot{Sealed: reply.GetSealed(), KeyID: reply.GetKeyId(), For: deployID}, nil
}
