package busapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/contract/names"
	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// databasesQueue is the zone's durable queue of managed-database commands, apart from the
// deploy commands so a slow CREATE DATABASE never holds a deploy up.
func databasesQueue(zone string) string { return "zoneagent." + zone + ".databases" }

// DatabaseSubscription consumes the databases service's commands to this zone.
func DatabaseSubscription(zone string, dbs *usecase.Databases) bus.Subscription {
	create, drop := zonebus.CommandKey(zone, zonebus.CommandDatabaseCreate), zonebus.CommandKey(zone, zonebus.CommandDatabaseDrop)
	dump, restore := zonebus.CommandKey(zone, zonebus.CommandDatabaseDump), zonebus.CommandKey(zone, zonebus.CommandDatabaseRestore)
	rotate, retire := zonebus.CommandKey(zone, zonebus.CommandDatabaseRotate), zonebus.CommandKey(zone, zonebus.CommandDatabaseRetire)
	return bus.Subscription{
		Queue: databasesQueue(zone),
		Keys:  []string{create, drop, dump, restore, rotate, retire},
		Handle: func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
			t := store.Bind(tx)
			switch d.RoutingKey {
			case create:
				var c zonev1.CreateDatabase
				if err := d.Decode(&c); err != nil {
					return bus.Permanent(err)
				}
				name, err := databaseName(c.GetDatabaseId(), c.GetAppId(), c.GetName())
				if err != nil {
					return err
				}
				if c.GetConnectionLimit() < 1 {
					return bus.Permanent(errors.New("busapi: a database needs a connection limit"))
				}
				if c.GetMaxBytes() < 1 {
					return bus.Permanent(errors.New("busapi: a database needs a size cap"))
				}
				return timed("provision", func() error {
					return dbs.Create(ctx, t, c.GetDatabaseId(), c.GetAppId(), name, int(c.GetConnectionLimit()), c.GetMaxBytes())
				})
			case drop:
				var c zonev1.DropDatabase
				if err := d.Decode(&c); err != nil {
					return bus.Permanent(err)
				}
				name, err := databaseName(c.GetDatabaseId(), c.GetAppId(), c.GetName())
				if err != nil {
					return err
				}
				return dbs.Drop(ctx, t, c.GetDatabaseId(), c.GetAppId(), name)
			case rotate, retire:
				var c zonev1.DropDatabase
				if err := d.Decode(&c); err != nil {
					return bus.Permanent(err)
				}
				name, err := databaseName(c.GetDatabaseId(), c.GetAppId(), c.GetName())
				if err != nil {
					return err
				}
				if d.RoutingKey == rotate {
					return dbs.Rotate(ctx, t, c.GetDatabaseId(), c.GetAppId(), name, d.ID)
				}
				return dbs.RetireOld(ctx, c.GetDatabaseId(), c.GetAppId(), name)
			case dump:
				var c zonev1.DumpDatabase
				if err := d.Decode(&c); err != nil {
					return bus.Permanent(err)
				}
				name, err := databaseName(c.GetDatabaseId(), c.GetAppId(), c.GetName())
				if err != nil {
					return err
				}
				dumpID, err := uuid.Parse(c.GetDumpId())
				if err != nil || dumpID.String() != c.GetDumpId() || c.GetObjectKey() != "dumps/"+c.GetDatabaseId()+"/"+c.GetDumpId()+".dump" {
					return bus.Permanent(errors.New("busapi: a dump command with a bad dump id or key"))
				}
				return timed("dump", func() error { return dbs.Dump(ctx, t, c.GetDatabaseId(), c.GetDumpId(), name, c.GetObjectKey()) })
			case restore:
				var c zonev1.RestoreDatabase
				if err := d.Decode(&c); err != nil {
					return bus.Permanent(err)
				}
				// The restore's database is named after the restore, like any other.
				name, err := databaseName(c.GetRestoreId(), c.GetAppId(), c.GetName())
				if err != nil {
					return err
				}
				if !strings.HasPrefix(c.GetObjectKey(), "dumps/") || !strings.HasSuffix(c.GetObjectKey(), ".dump") || c.GetConnectionLimit() < 1 || c.GetMaxBytes() < 1 {
					return bus.Permanent(errors.New("busapi: a restore command with a bad key or limits"))
				}
				return timed("restore", func() error {
					return dbs.Restore(ctx, t, c.GetRestoreId(), c.GetAppId(), name, c.GetObjectKey(), int(c.GetConnectionLimit()), c.GetMaxBytes())
				})
			}
			return bus.Permanent(fmt.Errorf("busapi: unexpected routing key %q", d.RoutingKey))
		},
	}
}

// DatabaseName is a database's name on the zone's cluster: db_ and its id's hex, as the
// databases service names it (the contract's names.DatabaseName). Nothing else ever reaches
// SQL or the pooler's files.
func DatabaseName(databaseID string) (string, bool) { return names.DatabaseName(databaseID) }

// databaseName checks a command's ids and that its name is the one its id gives.
func databaseName(databaseID, appID, name string) (string, error) {
	want, ok := DatabaseName(databaseID)
	if _, err := uuid.Parse(appID); !ok || err != nil || name != want {
		return "", bus.Permanent(errors.New("busapi: a database command with bad ids or name"))
	}
	return want, nil
}

// DatabaseCredentials answers zoneagent.<zone>.rpc.database_credentials with a database's
// connection parts. This reply is the only place a database password crosses the bus
// (request/reply messages are transient and never rest in a queue or the outbox).
func DatabaseCredentials(dbs *usecase.Databases) bus.Responder {
	return func(ctx context.Context, d bus.Delivery) (proto.Message, error) {
		var req zonev1.DatabaseCredentialsRequest
		if err := d.Decode(&req); err != nil {
			return nil, bus.Reject("bad_request", "undecodable DatabaseCredentialsRequest")
		}
		name, ok := DatabaseName(req.GetDatabaseId())
		if !ok {
			return nil, bus.Reject("bad_request", "database_id is not a UUID")
		}
		c, err := dbs.Credentials(name)
		if errors.Is(err, usecase.ErrNoDatabase) {
			return nil, bus.Reject("not_found", "no such database in this zone")
		}
		if err != nil {
			return nil, err
		}
		return &zonev1.DatabaseCredentialsReply{User: c.User, Password: c.Password, Database: c.Database, Host: c.Host, Port: int32(c.Port)}, nil
	}
}
