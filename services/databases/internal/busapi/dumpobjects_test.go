package busapi

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/databases/internal/database"
)

// The dump's own zone is asked, on the real broker: its URL comes back, its not_found is the
// domain's ErrNotFound (a 404), and a zone that does not answer is ErrZoneUnavailable (a
// 503), never a URL or a 500. Pruned dumps are named to that zone by id.
func TestZoneDumpsAsksTheDumpsZone(t *testing.T) {
	cfg := testinfra.BusConfig(t)
	zone := testinfra.DialBusAs(t, cfg, bus.ZonePrincipal("local"), nil)
	databases := testinfra.DialBusAs(t, cfg, bus.PrincipalDatabases, nil)
	databaseID, dumpID := uuid.NewString(), uuid.NewString()
	deleted := make(chan *zonev1.DeleteDumpsRequest, 1)
	testinfra.Background(t, "dump URL", func(ctx context.Context) error {
		return zone.Serve(ctx, zonebus.DumpURLQueue("local"), func(_ context.Context, d bus.Delivery) (proto.Message, error) {
			var req zonev1.DumpURLRequest
			if err := d.Decode(&req); err != nil {
				return nil, err
			}
			if req.GetDumpId() != dumpID {
				return nil, bus.Reject("not_found", "no such dump in this zone")
			}
			return &zonev1.DumpURLReply{Url: "http://store.test/tori-zone-local/dumps/" + req.GetDatabaseId() + "/" + req.GetDumpId() + ".dump?X-Amz-Signature=x"}, nil
		})
	})
	testinfra.Background(t, "dump delete", func(ctx context.Context) error {
		return zone.Serve(ctx, zonebus.DeleteDumpsQueue("local"), func(_ context.Context, d bus.Delivery) (proto.Message, error) {
			var req zonev1.DeleteDumpsRequest
			if err := d.Decode(&req); err != nil {
				return nil, err
			}
			deleted <- &req
			return &zonev1.DeleteDumpsReply{Deleted: int32(len(req.GetDumpIds()))}, nil
		})
	})
	z := ZoneDumps{Bus: databases, Timeout: 2 * time.Second}
	ctx := context.Background()
	var u string
	testinfra.Eventually(t, 20*time.Second, "the zone answers", func() bool {
		var err error
		u, err = z.DownloadURL(ctx, "local", databaseID, dumpID)
		return err == nil
	})
	if u != "http://store.test/tori-zone-local/dumps/"+databaseID+"/"+dumpID+".dump?X-Amz-Signature=x" {
		t.Fatalf("URL %q", u)
	}
	if _, err := z.DownloadURL(ctx, "local", databaseID, uuid.NewString()); !errors.Is(err, database.ErrNotFound) {
		t.Fatalf("a dump the zone does not have: %v", err)
	}
	// No agent answers for zone "gone".
	if _, err := z.DownloadURL(ctx, "gone", databaseID, dumpID); !errors.Is(err, database.ErrZoneUnavailable) {
		t.Fatalf("a zone that does not answer: %v", err)
	}
	if err := z.Delete(ctx, "local", databaseID, []string{dumpID}); err != nil {
		t.Fatal(err)
	}
	if req := <-deleted; req.GetDatabaseId() != databaseID || len(req.GetDumpIds()) != 1 || req.GetDumpIds()[0] != dumpID {
		t.Fatalf("delete asked %v", req)
	}
	if err := z.Delete(ctx, "gone", databaseID, []string{dumpID}); !errors.Is(err, database.ErrZoneUnavailable) {
		t.Fatalf("a delete no zone answers: %v", err)
	}
}
