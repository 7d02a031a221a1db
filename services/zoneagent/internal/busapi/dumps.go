package busapi

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/usecase"
)

// DumpURL answers zoneagent.<zone>.rpc.dump_url with a short-lived download URL of one dump,
// to the databases service alone (it has checked the caller owns the database). The URL is
// made from the ids, never from a key the asker names, so nothing but a dump is reachable.
func DumpURL(dbs *usecase.Databases) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req zonev1.DumpURLRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable DumpURLRequest")
		}
		if !canonicalUUID(req.GetDatabaseId()) || !canonicalUUID(req.GetDumpId()) {
			return nil, bus.Reject("bad_request", "database_id and dump_id must be UUIDs")
		}
		u, expires, err := dbs.DumpURL(ctx, req.GetDatabaseId(), req.GetDumpId())
		if errors.Is(err, usecase.ErrNoDump) {
			return nil, bus.Reject("not_found", "no such dump in this zone")
		}
		if err != nil {
			return nil, err
		}
		return &zonev1.DumpURLReply{Url: u, ExpiresAt: timestamppb.New(expires)}, nil
	}
}

// DeleteDumps answers zoneagent.<zone>.rpc.dump_delete, to the databases service alone:
// the dumps its retention pruned leave the zone's bucket.
func DeleteDumps(dbs *usecase.Databases) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req zonev1.DeleteDumpsRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable DeleteDumpsRequest")
		}
		if !canonicalUUID(req.GetDatabaseId()) {
			return nil, bus.Reject("bad_request", "database_id must be a UUID")
		}
		for _, id := range req.GetDumpIds() {
			if !canonicalUUID(id) {
				return nil, bus.Reject("bad_request", "dump_ids must be UUIDs")
			}
		}
		n, err := dbs.DeleteDumps(ctx, req.GetDatabaseId(), req.GetDumpIds())
		if err != nil {
			return nil, err
		}
		return &zonev1.DeleteDumpsReply{Deleted: int32(n)}, nil
	}
}

// canonicalUUID reports whether s is a UUID in its lowercase hyphenated form, the only form
// object keys are made of.
func canonicalUUID(s string) bool {
	id, err := uuid.Parse(s)
	return err == nil && id.String() == s
}
