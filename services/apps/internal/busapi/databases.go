package busapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/contract/names"
	"tori.dev/pkg/bus"
	databasesv1 "tori.dev/proto/gen/tori/databases/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	databasesbus "tori.dev/proto/tori/databases/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/apps/internal/env"
	"tori.dev/services/apps/internal/usecase"
)

// QueueDatabases is this service's durable queue of the databases service's events.
const QueueDatabases = "apps.databases"

// Requester asks a question on the bus; *bus.Conn is one.
type Requester interface {
	Request(ctx context.Context, queue string, req, reply proto.Message) error
}

// DatabaseConsumer writes and removes DATABASE_URL as the managed database comes and goes,
// and DATABASE_RESTORE_URL as a restore of it does.
// The credentials are asked of the database's zone in a request whose reply is the only
// place they cross the bus; the event names the database alone.
type DatabaseConsumer struct {
	Tx   func(tx bus.Tx) usecase.Tx
	URLs usecase.DatabaseURLs
	Bus  Requester
}

// Subscription is the durable consumer of databases.{database,restore}.{ready,deleted} and
// databases.database.rotated.
func (c DatabaseConsumer) Subscription() bus.Subscription {
	return bus.Subscription{
		Queue: QueueDatabases,
		Keys: []string{databasesbus.KeyDatabaseReady, databasesbus.KeyDatabaseRotated, databasesbus.KeyDatabaseDeleted,
			databasesbus.KeyRestoreReady, databasesbus.KeyRestoreDeleted},
		Handle: func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
			var m databasesv1.DatabaseChanged
			if err := d.Decode(&m); err != nil {
				return bus.Permanent(fmt.Errorf("busapi: decode DatabaseChanged: %w", err))
			}
			dbID, err1 := uuid.Parse(m.GetDatabaseId())
			appID, err2 := uuid.Parse(m.GetAppId())
			if err1 != nil || err2 != nil || m.GetZone() == "" || strings.Contains(m.GetZone(), ".") {
				return bus.Permanent(fmt.Errorf("busapi: a database event with bad ids or zone"))
			}
			role, _ := names.DatabaseName(dbID.String()) // a parsed id is canonical
			key := env.DatabaseURLKey
			if d.RoutingKey == databasesbus.KeyRestoreReady || d.RoutingKey == databasesbus.KeyRestoreDeleted {
				key = env.DatabaseRestoreURLKey
			}
			switch d.RoutingKey {
			// A rotation is a ready database with a new password: the same rewrite, which keeps
			// the customer's query parameters and leaves a URL to another host alone.
			case databasesbus.KeyDatabaseReady, databasesbus.KeyDatabaseRotated, databasesbus.KeyRestoreReady:
				var reply zonev1.DatabaseCredentialsReply
				if err := c.Bus.Request(ctx, zonebus.DatabaseCredentialsQueue(m.GetZone()), &zonev1.DatabaseCredentialsRequest{
					DatabaseId: dbID.String(), AppId: appID.String(),
				}, &reply); err != nil {
					// Retried by the bus: the zone may be restarting.
					return fmt.Errorf("busapi: credentials of database %s: %w", dbID, err)
				}
				if !env.IsDatabaseLogin(reply.GetUser(), role) || reply.GetDatabase() != role || reply.GetPassword() == "" || reply.GetPort() < 1 {
					return bus.Permanent(fmt.Errorf("busapi: the zone answered credentials for another database than %s", dbID))
				}
				return c.URLs.Ready(ctx, c.Tx(tx), appID.String(), key, env.DatabaseCredentials{
					User: reply.GetUser(), Password: reply.GetPassword(), Database: reply.GetDatabase(),
					Host: reply.GetHost(), Port: int(reply.GetPort()),
				})
			case databasesbus.KeyDatabaseDeleted, databasesbus.KeyRestoreDeleted:
				return c.URLs.Deleted(ctx, c.Tx(tx), appID.String(), key, role)
			}
			return bus.Permanent(fmt.Errorf("busapi: unexpected routing key %q on %s", d.RoutingKey, QueueDatabases))
		},
	}
}
