package busapi

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/app"
	"tori.dev/services/apps/internal/env"
)

// EnvSnapshot answers apps.rpc.env_snapshot: the app's environment sealed for one deploy.
// The answer holds only ciphertext, so deploys may store it.
func EnvSnapshot(svc *app.Env) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req appsv1.EnvSnapshotRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable EnvSnapshotRequest")
		}
		sealed, keyID, n, err := svc.Snapshot(ctx, req.GetAppId(), req.GetDeployId())
		if errors.Is(err, env.ErrAppGone) {
			return nil, bus.Reject("not_found", "no live app with that id")
		}
		if err != nil {
			return nil, err
		}
		return &appsv1.EnvSnapshotReply{Sealed: sealed, KeyId: keyID, Count: int32(n)}, nil
	}
}

// EnvOpen answers apps.rpc.env_open with the plaintext variables. This reply is the one
// place plaintext crosses the bus: request/reply messages are transient and never rest in a
// durable queue, a dead-letter queue or the outbox.
func EnvOpen(svc *app.Env) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req appsv1.EnvOpenRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable EnvOpenRequest")
		}
		vars, err := svc.Open(ctx, req.GetAppId(), req.GetDeployId(), req.GetSealed(), req.GetKeyId())
		switch {
		case errors.Is(err, env.ErrAppGone):
			return nil, bus.Reject("not_found", "no live app with that id")
		case errors.Is(err, env.ErrSealed):
			return nil, bus.Reject("invalid_snapshot", "the snapshot was not sealed for this app and deploy")
		case err != nil:
			return nil, err
		}
		return &appsv1.EnvOpenReply{Vars: vars}, nil
	}
}
