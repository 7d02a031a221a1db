package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// publishAs publishes msg under key as principal's own broker user, as its relay would.
func publishAs(t *testing.T, ns, principal, key string, msg proto.Message) {
	t.Helper()
	ac, err := amqp.Dial(testinfra.ServiceAMQPURL(t, principal))
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	ch, err := ac.Channel()
	if err != nil {
		t.Fatal(err)
	}
	body, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.PublishWithContext(context.Background(), ns+"tori.events", key, false, false, amqp.Publishing{
		MessageId: uuid.NewString(), UserId: bus.UserName(brokeradmin.TestPrefix, principal),
		Type: string(msg.ProtoReflect().Descriptor().FullName()), Body: body,
	}); err != nil {
		t.Fatal(err)
	}
}

// createCommands are the create commands for databaseID the service has sent its zone.
func createCommands(t *testing.T, r *testinfra.Running, databaseID string) []*zonev1.CreateDatabase {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, r.Env["DATABASES_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY id`, zonebus.CommandKey("local", zonebus.CommandDatabaseCreate))
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	var out []*zonev1.CreateDatabase
	for _, b := range bodies {
		var c zonev1.CreateDatabase
		if proto.Unmarshal(b, &c) == nil && c.GetDatabaseId() == databaseID {
			out = append(out, &c)
		}
	}
	return out
}

// A plan change gives the account's database the new limits and sends its zone the create
// command again with them; an older plan event than the one on record changes nothing.
func TestDatabaseFollowsPlanChanges(t *testing.T) {
	w := &world{apps: map[[2]string]*appsv1.AppCreated{}}
	acc := uuid.NewString()
	r := testinfra.Service{Name: "databases", Serve: serve}.Start(t)
	w.serve(t, r.Env)
	w.app(acc, "api", "service")
	status, body := call(t, r, acc, "POST", "/api/apps/api/database")
	if status != 202 {
		t.Fatalf("create: %d %v", status, body)
	}
	id := body["id"].(string)
	if c := createCommands(t, r, id); len(c) != 1 || c[0].GetConnectionLimit() != 5 || c[0].GetMaxBytes() != 268435456 {
		t.Fatalf("create command %v", c)
	}

	ns := r.Env["BUS_NAMESPACE"]
	change := func(version int64, conns, bytes int64) {
		publishAs(t, ns, bus.PrincipalBilling, billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{
			AccountId: acc, Plan: "songbird", Version: version,
			Limits: &billingv1.PlanLimits{DatabaseConnections: conns, DatabaseBytes: bytes},
		})
	}
	change(2, 20, 1073741824)
	testinfra.Eventually(t, 20*time.Second, "the zone told the new limits", func() bool {
		c := createCommands(t, r, id)
		return len(c) == 2 && c[1].GetConnectionLimit() == 20 && c[1].GetMaxBytes() == 1073741824
	})
	// An older event, then a newer one as a marker: only the marker is applied.
	change(1, 7, 7)
	change(3, 100, 10737418240)
	testinfra.Eventually(t, 20*time.Second, "the marker applied", func() bool { return len(createCommands(t, r, id)) >= 3 })
	c := createCommands(t, r, id)
	if len(c) != 3 || c[2].GetConnectionLimit() != 100 {
		t.Fatalf("after an older plan event: %v", c)
	}
}
