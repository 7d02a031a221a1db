package busapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/databases/internal/database"
)

// Requester sends one request and waits for its answer; *bus.Conn is one.
type Requester interface {
	Request(ctx context.Context, queue string, req, reply proto.Message) error
}

// ZoneDumps reaches the dumps in a zone's bucket through that zone's request queues: the
// zone holds the bucket's credentials, this service none (usecase.DumpObjects).
type ZoneDumps struct {
	Bus Requester
	// Timeout bounds one question to a zone.
	Timeout time.Duration
}

// DownloadURL asks the zone for a short-lived URL of one dump.
func (z ZoneDumps) DownloadURL(ctx context.Context, zone, databaseID, dumpID string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, z.Timeout)
	defer cancel()
	var reply zonev1.DumpURLReply
	err := z.Bus.Request(ctx, zonebus.DumpURLQueue(zone), &zonev1.DumpURLRequest{DatabaseId: databaseID, DumpId: dumpID}, &reply)
	var re *bus.RemoteError
	if errors.As(err, &re) && re.Code == "not_found" {
		return "", database.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("%w: dump URL from zone %s: %w", database.ErrZoneUnavailable, zone, err)
	}
	if reply.GetUrl() == "" {
		return "", fmt.Errorf("%w: zone %s answered no URL", database.ErrZoneUnavailable, zone)
	}
	return reply.GetUrl(), nil
}

// Delete asks the zone to delete pruned dumps from its bucket.
func (z ZoneDumps) Delete(ctx context.Context, zone, databaseID string, dumpIDs []string) error {
	ctx, cancel := context.WithTimeout(ctx, z.Timeout)
	defer cancel()
	var reply zonev1.DeleteDumpsReply
	if err := z.Bus.Request(ctx, zonebus.DeleteDumpsQueue(zone), &zonev1.DeleteDumpsRequest{DatabaseId: databaseID, DumpIds: dumpIDs}, &reply); err != nil {
		return fmt.Errorf("%w: delete pruned dumps in zone %s: %w", database.ErrZoneUnavailable, zone, err)
	}
	return nil
}
