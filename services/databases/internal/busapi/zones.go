package busapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/databases/internal/usecase"
)

// QueueZones is this service's durable queue of the zones' database reports.
const QueueZones = "databases.zones"

// Transactions turns the transaction the bus opened for a message into the use cases' Tx;
// *store.Store is one.
type Transactions interface {
	Bind(tx bus.Tx) usecase.Tx
}

// ZoneReports consumes zone.database.{ready,failed,dropped,read_only,writable,dumped,restored,rotated}.
func ZoneReports(txs Transactions, dbs *usecase.Databases) bus.Subscription {
	return bus.Subscription{
		Queue: QueueZones,
		Keys: []string{zonebus.KeyDatabaseReady, zonebus.KeyDatabaseFailed, zonebus.KeyDatabaseDropped,
			zonebus.KeyDatabaseReadOnly, zonebus.KeyDatabaseWritable, zonebus.KeyDatabaseDumped, zonebus.KeyDatabaseRestored,
			zonebus.KeyDatabaseRotated},
		Handle: func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
			switch d.RoutingKey {
			case zonebus.KeyDatabaseDumped:
				return dumped(ctx, txs, dbs, tx, d)
			case zonebus.KeyDatabaseRestored:
				return restored(ctx, txs, dbs, tx, d)
			}
			var m zonev1.DatabaseChanged
			if err := d.Decode(&m); err != nil {
				return bus.Permanent(fmt.Errorf("busapi: decode DatabaseChanged: %w", err))
			}
			if _, err := uuid.Parse(m.GetDatabaseId()); err != nil {
				return bus.Permanent(fmt.Errorf("busapi: database id %q: %w", m.GetDatabaseId(), err))
			}
			// A zone speaks for its own databases only.
			if zone, ok := bus.ZoneOf(d.Publisher); !ok || zone != m.GetZone() {
				return bus.Permanent(fmt.Errorf("busapi: a report for zone %q from %q", m.GetZone(), d.Publisher))
			}
			return dbs.ZoneReported(ctx, txs.Bind(tx), usecase.ZoneReport{
				Kind: d.RoutingKey, DatabaseID: m.GetDatabaseId(), Zone: m.GetZone(), Message: m.GetMessage(),
			})
		},
	}
}

func dumped(ctx context.Context, txs Transactions, dbs *usecase.Databases, tx bus.Tx, d bus.Delivery) error {
	var m zonev1.DatabaseDumped
	if err := d.Decode(&m); err != nil {
		return bus.Permanent(fmt.Errorf("busapi: decode DatabaseDumped: %w", err))
	}
	if _, err := uuid.Parse(m.GetDumpId()); err != nil {
		return bus.Permanent(fmt.Errorf("busapi: dump id %q: %w", m.GetDumpId(), err))
	}
	zone, ok := bus.ZoneOf(d.Publisher)
	if !ok || zone != m.GetZone() {
		return bus.Permanent(fmt.Errorf("busapi: a dump report for zone %q from %q", m.GetZone(), d.Publisher))
	}
	return dbs.DumpReported(ctx, txs.Bind(tx), zone, m.GetDumpId(), m.GetOk(), m.GetSizeBytes())
}

func restored(ctx context.Context, txs Transactions, dbs *usecase.Databases, tx bus.Tx, d bus.Delivery) error {
	var m zonev1.DatabaseRestored
	if err := d.Decode(&m); err != nil {
		return bus.Permanent(fmt.Errorf("busapi: decode DatabaseRestored: %w", err))
	}
	if _, err := uuid.Parse(m.GetRestoreId()); err != nil {
		return bus.Permanent(fmt.Errorf("busapi: restore id %q: %w", m.GetRestoreId(), err))
	}
	zone, ok := bus.ZoneOf(d.Publisher)
	if !ok || zone != m.GetZone() {
		return bus.Permanent(fmt.Errorf("busapi: a restore report for zone %q from %q", m.GetZone(), d.Publisher))
	}
	return dbs.RestoreReported(ctx, txs.Bind(tx), zone, m.GetRestoreId(), m.GetOk(), m.GetMessage())
}
