package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/testinfra"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/managed"
)

// outboxCount is how many events of key for databaseID the zone has published.
func outboxCount(t *testing.T, z *testinfra.Running, key, databaseID string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, z.Env["ZONEAGENT_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT body FROM outbox WHERE routing_key = $1 AND sent_at IS NOT NULL`, key)
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range bodies {
		var m zonev1.DatabaseChanged
		if proto.Unmarshal(b, &m) == nil && m.GetDatabaseId() == databaseID {
			n++
		}
	}
	return n
}

// A rotation through the running zone agent, its cluster and its pooler, as the databases
// service commands it: after database_rotate both the old and the new password work through
// the pooler; after database_retire (what the next
// deploy going live, or 24 hours, sends) the old one is refused and the new one works, on
// the data the old one wrote.
func TestZoneRotatesADatabasePassword(t *testing.T) {
	poolerAddr := testinfra.FreeAddr(t)
	z := testinfra.Service{
		Name: "zoneagent", Serve: serve, AddrVar: "ZONEAGENT_ADDR", ReadyPath: "/readyz",
		Env: withZoneStore(t, map[string]string{
			"EDGE_TLS_ADDR": "off", // the edge's HTTPS is edge_tls_test.go's
			"EDGE_ADDR":     testinfra.FreeAddr(t), "ZONE_APPS_DIR": t.TempDir(), "APPS_DOMAIN": "apps.test",
			"ZONE_POSTGRES_ADMIN_URL": testinfra.ZoneProvisionerURL(t), "ZONE_POOLER_ADDR": poolerAddr, "ZONE_DATABASES_DIR": testDatabasesDir(t),
			// An open session of a retired password fails at its next transaction, once the
			// pooler gives up logging in as the retired login.
			"ZONE_POOLER_QUERY_WAIT_TIMEOUT": "2s",
		}),
	}.Start(t)
	ns := z.Env["BUS_NAMESPACE"]
	id, app := uuid.NewString(), uuid.NewString()
	name, _ := busapi.DatabaseName(id)
	ids := &zonev1.DropDatabase{DatabaseId: id, AppId: app, Name: name}
	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseCreate),
		&zonev1.CreateDatabase{DatabaseId: id, AppId: app, Name: name, ConnectionLimit: 3, MaxBytes: 1 << 28})
	testinfra.Eventually(t, 30*time.Second, "zone.database.ready", func() bool { return outboxCount(t, z, zonebus.KeyDatabaseReady, id) == 1 })
	t.Cleanup(func() {
		publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseDrop), ids)
		testinfra.Eventually(t, 30*time.Second, "zone.database.dropped", func() bool { return outboxCount(t, z, zonebus.KeyDatabaseDropped, id) == 1 })
	})

	var cfg bus.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, z.Env); err != nil {
		t.Fatal(err)
	}
	apps := testinfra.DialBus(t, cfg.WithURL(testinfra.ServiceAMQPURL(t, bus.PrincipalApps)), nil)
	ctx := context.Background()
	creds := func() *zonev1.DatabaseCredentialsReply {
		var reply zonev1.DatabaseCredentialsReply
		if err := apps.Request(ctx, zonebus.DatabaseCredentialsQueue("local"), &zonev1.DatabaseCredentialsRequest{DatabaseId: id, AppId: app}, &reply); err != nil {
			t.Fatal(err)
		}
		return &reply
	}
	connect := func(c *zonev1.DatabaseCredentialsReply) (*pgx.Conn, error) {
		return pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable&default_query_exec_mode=simple_protocol",
			c.GetUser(), c.GetPassword(), poolerAddr, c.GetDatabase()))
	}
	old := creds()
	oldConn, err := connect(old)
	if err != nil {
		t.Fatal(err)
	}
	defer oldConn.Close(ctx)
	if _, err := oldConn.Exec(ctx, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('before')"); err != nil {
		t.Fatal(err)
	}

	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseRotate), ids)
	testinfra.Eventually(t, 30*time.Second, "zone.database.rotated", func() bool { return outboxCount(t, z, zonebus.KeyDatabaseRotated, id) == 1 })
	fresh := creds()
	if fresh.GetPassword() == old.GetPassword() || fresh.GetUser() == old.GetUser() || fresh.GetDatabase() != name {
		t.Fatalf("after the rotation the credentials are %s on %s (before: %s)", fresh.GetUser(), fresh.GetDatabase(), old.GetUser())
	}
	for _, c := range []*zonev1.DatabaseCredentialsReply{old, fresh} {
		conn, err := connect(c)
		if err != nil {
			t.Fatalf("%s after the rotation: %v", c.GetUser(), err)
		}
		if _, err := conn.Exec(ctx, "INSERT INTO notes VALUES ('during')"); err != nil {
			t.Fatalf("%s writes after the rotation: %v", c.GetUser(), err)
		}
		conn.Close(ctx)
	}

	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseRetire), ids)
	testinfra.Eventually(t, 30*time.Second, "the old password refused", func() bool {
		conn, err := connect(old)
		if err != nil {
			return true
		}
		conn.Close(ctx)
		return false
	})
	if _, err := oldConn.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("a session of the old password goes on after it was retired")
	}
	conn, err := connect(fresh)
	if err != nil {
		t.Fatalf("the new password after the old one was retired: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM notes").Scan(&n); err != nil || n != 3 {
		t.Fatalf("the new login reads %d notes (%v), want 3", n, err)
	}

	// A plan change afterwards (the create command again) gives the login in use the new
	// limit (and the zone's own connection above it) and leaves the retired one retired.
	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseCreate),
		&zonev1.CreateDatabase{DatabaseId: id, AppId: app, Name: name, ConnectionLimit: 7, MaxBytes: 1 << 28})
	testinfra.Eventually(t, 30*time.Second, "the plan change applied", func() bool { return outboxCount(t, z, zonebus.KeyDatabaseReady, id) == 2 })
	super, err := pgx.Connect(ctx, testinfra.ZonePostgresSuperURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	logins := map[string]bool{}
	limits := map[string]int{}
	rows, err := super.Query(ctx, "SELECT rolname, rolcanlogin, rolconnlimit FROM pg_roles WHERE rolname IN ($1, $2)", old.GetUser(), fresh.GetUser())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var role string
		var canLogin bool
		var limit int
		if err := rows.Scan(&role, &canLogin, &limit); err != nil {
			t.Fatal(err)
		}
		logins[role], limits[role] = canLogin, limit
	}
	if rows.Err() != nil || logins[old.GetUser()] || !logins[fresh.GetUser()] || limits[fresh.GetUser()] != 7+managed.ZoneConnections {
		t.Fatalf("after the plan change: logins %v, limits %v (%v)", logins, limits, rows.Err())
	}
	if again := creds(); again.GetUser() != fresh.GetUser() || again.GetPassword() != fresh.GetPassword() {
		t.Fatal("a plan change changed the credentials")
	}
}
