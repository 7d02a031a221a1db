package busapi

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/env"
	"tori.dev/services/apps/internal/usecase"
)

// EnvSnapshot answers apps.rpc.env_snapshot: the app's environment sealed for one deploy.
// The answer holds only ciphertext, so deploys may store it.
func EnvSnapshot(svc *usecase.Env) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req appsv1.EnvSnapshotRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable EnvSnapshotRequest")
		}
		opts := usecase.SnapshotOptions{Overrides: req.GetOverrides(), Preview: req.GetPreview(), WithoutDatabase: req.GetWithoutDatabase()}
		sealed, keyID, n, err := svc.SnapshotWith(ctx, req.GetAppId(), req.GetDeployId(), opts)
		if errors.Is(err, env.ErrAppGone) {
			return nil, bus.Reject("not_found", "no live app with that id")
		}
		if errors.Is(err, env.ErrInvalidKey) || errors.Is(err, env.ErrInvalidValue) {
			// Names no key and no value: the requester checked them already.
			return nil, bus.Reject("bad_request", "an override's name or value is not a variable's")
		}
		if err != nil {
			return nil, err
		}
		return &appsv1.EnvSnapshotReply{Sealed: sealed, KeyId: keyID, Count: int32(n)}, nil
	}
}

// EnvOpen answers apps.rpc.env_open with the plaintext variables, only to the zone that
// hosts the deploy (serve it behind bus.OnlyFrom(bus.IsZone, …)). This reply is the one place
// plaintext crosses the bus: request/reply messages are transient and never rest in a
// durable queue, a dead-letter queue or the outbox.
func EnvOpen(svc *usecase.Env) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		zone, ok := bus.ZoneOf(d.Publisher)
		if !ok {
			return nil, bus.Reject(bus.CodeForbidden, "only a zone opens a snapshot")
		}
		var req appsv1.EnvOpenRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable EnvOpenRequest")
		}
		snap := usecase.Sealed{DeployID: req.GetDeployId(), Sealed: req.GetSealed(), KeyID: req.GetKeyId()}
		vars, err := svc.OpenForZone(ctx, zone, req.GetAppId(), req.GetRevisionDeployId(), snap)
		if err != nil {
			return nil, envRefusal(err)
		}
		return &appsv1.EnvOpenReply{Vars: vars}, nil
	}
}

// EnvSame answers apps.rpc.env_same: whether two snapshots hold the same variables, never
// the variables themselves.
func EnvSame(svc *usecase.Env) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req appsv1.EnvSameRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable EnvSameRequest")
		}
		sealed := func(s *appsv1.SealedEnv) usecase.Sealed {
			return usecase.Sealed{DeployID: s.GetDeployId(), Sealed: s.GetSealed(), KeyID: s.GetKeyId()}
		}
		same, err := svc.Same(ctx, req.GetAppId(), sealed(req.GetA()), sealed(req.GetB()))
		if err != nil {
			return nil, envRefusal(err)
		}
		return &appsv1.EnvSameReply{Same: same}, nil
	}
}

// envRefusal is the code a requester sees for a snapshot that does not open.
func envRefusal(err error) error {
	switch {
	case errors.Is(err, env.ErrNotHosted):
		return bus.Reject(bus.CodeForbidden, "this zone does not host that deploy")
	case errors.Is(err, env.ErrAppGone):
		return bus.Reject("not_found", "no live app with that id")
	case errors.Is(err, env.ErrSealed):
		return bus.Reject("invalid_snapshot", "the snapshot was not sealed for this app and deploy")
	}
	return err
}
