package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/busapi"
)

// publishAs publishes msg under key on the test's events exchange as principal's own
// broker user, as that service's relay would.
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

// withZoneBucket adds to env the zone's own account and bucket on an S3 server of the test's
// own, as bin/bootstrap writes them to the agent's file (managed databases keep their dumps
// there), and returns env and the zone's store.
func withZoneBucket(t *testing.T, env map[string]string) (map[string]string, *objectstore.Store) {
	t.Helper()
	creds := testinfra.StartObjectStore(t).ZoneObjectStoreEnv(t, "local")
	for k, v := range creds {
		env[k] = v
	}
	bucket, err := objectstore.New(objectstore.Config{URL: creds["OBJECT_STORE_URL"], AccessKey: creds["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"],
		SecretKey: creds["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: creds["ZONEAGENT_OBJECT_STORE_BUCKET"]})
	if err != nil {
		t.Fatal(err)
	}
	return env, bucket
}

// outboxHas reports whether the zone's outbox holds a published event of key for databaseID.
func outboxHas(t *testing.T, z *testinfra.Running, key, databaseID string) bool {
	t.Helper()
	return outboxCount(t, z, key, databaseID) > 0
}

// The databases service's command makes a database the app reaches through the zone's
// pooler with the credentials only the apps service's request gets; the drop command takes
// it away. Both are reported as the zone's events.
func TestZoneProvisionsADatabase(t *testing.T) {
	poolerAddr := testinfra.FreeAddr(t)
	env, bucket := withZoneBucket(t, map[string]string{
		"EDGE_TLS_ADDR": "off", // the edge's HTTPS is edge_tls_test.go's
		"EDGE_ADDR":     testinfra.FreeAddr(t), "ZONE_EDGE_HEALTH_ADDR": testinfra.FreeAddr(t), "ZONE_APPS_DIR": t.TempDir(), "APPS_DOMAIN": "apps.test",
		"ZONE_POSTGRES_ADMIN_URL": testinfra.ZoneProvisionerURL(t), "ZONE_POOLER_ADDR": poolerAddr, "ZONE_DATABASES_HEALTH_ADDR": testinfra.FreeAddr(t), "ZONE_DATABASES_DIR": testDatabasesDir(t),
		"DATABASE_STATEMENT_TIMEOUT": "500ms",
	})
	z := testinfra.Service{Name: "zoneagent", Serve: serve, AddrVar: "ZONEAGENT_ADDR", ReadyPath: "/readyz", Env: env}.Start(t)
	ns := z.Env["BUS_NAMESPACE"]
	id, app := uuid.NewString(), uuid.NewString()
	name, _ := busapi.DatabaseName(id)
	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseCreate),
		&zonev1.CreateDatabase{DatabaseId: id, AppId: app, Name: name, ConnectionLimit: 3, MaxBytes: 1 << 28})
	testinfra.Eventually(t, 30*time.Second, "zone.database.ready", func() bool { return outboxHas(t, z, zonebus.KeyDatabaseReady, id) })

	var cfg bus.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, z.Env); err != nil {
		t.Fatal(err)
	}
	apps := testinfra.DialBus(t, cfg.WithURL(testinfra.ServiceAMQPURL(t, bus.PrincipalApps)), nil)
	var reply zonev1.DatabaseCredentialsReply
	if err := apps.Request(context.Background(), zonebus.DatabaseCredentialsQueue("local"), &zonev1.DatabaseCredentialsRequest{DatabaseId: id, AppId: app}, &reply); err != nil {
		t.Fatal(err)
	}
	if reply.GetHost() != "127.0.0.1" || fmt.Sprintf("127.0.0.1:%d", reply.GetPort()) != poolerAddr || reply.GetUser() != name || reply.GetDatabase() != name {
		t.Fatalf("credentials name %s@%s:%d/%s", reply.GetUser(), reply.GetHost(), reply.GetPort(), reply.GetDatabase())
	}
	ctx := context.Background()
	url := fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable&default_query_exec_mode=simple_protocol", reply.GetUser(), reply.GetPassword(), poolerAddr, reply.GetDatabase())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("through the pooler: %v", err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"); err != nil {
		t.Fatal(err)
	}
	var body string
	if err := conn.QueryRow(ctx, "SELECT body FROM notes").Scan(&body); err != nil || body != "kept" {
		t.Fatalf("read %q (%v)", body, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_sleep(3)"); err == nil {
		t.Fatal("a statement past DATABASE_STATEMENT_TIMEOUT ran to its end")
	}
	conn.Close(ctx)

	// Asked by anyone but the apps service: forbidden.
	deploys := testinfra.DialBus(t, cfg.WithURL(testinfra.ServiceAMQPURL(t, bus.PrincipalDeploys)), nil)
	var stolen zonev1.DatabaseCredentialsReply
	err = deploys.Request(ctx, zonebus.DatabaseCredentialsQueue("local"), &zonev1.DatabaseCredentialsRequest{DatabaseId: id, AppId: app}, &stolen)
	if re, ok := err.(*bus.RemoteError); !ok || re.Code != "forbidden" || stolen.GetPassword() != "" {
		t.Fatalf("credentials asked by deploys: %v", err)
	}

	// An unknown database: not_found.
	var none zonev1.DatabaseCredentialsReply
	err = apps.Request(ctx, zonebus.DatabaseCredentialsQueue("local"), &zonev1.DatabaseCredentialsRequest{DatabaseId: uuid.NewString(), AppId: app}, &none)
	if re, ok := err.(*bus.RemoteError); !ok || re.Code != "not_found" {
		t.Fatalf("credentials of an unknown database: %v", err)
	}

	// A dump in pg_dump's custom format lands in the zone's bucket, readable by pg_restore,
	// downloaded through the URL only the databases service may ask for.
	dumpID := uuid.NewString()
	key := "dumps/" + id + "/" + dumpID + ".dump"
	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseDump),
		&zonev1.DumpDatabase{DatabaseId: id, AppId: app, Name: name, DumpId: dumpID, ObjectKey: key})
	var dumped zonev1.DatabaseDumped
	testinfra.Eventually(t, 60*time.Second, "zone.database.dumped", func() bool {
		b, ok := outboxBody(t, z, zonebus.KeyDatabaseDumped)
		return ok && proto.Unmarshal(b, &dumped) == nil && dumped.GetDumpId() == dumpID
	})
	info, err := bucket.Head(ctx, key)
	if !dumped.GetOk() || err != nil || info.Size != dumped.GetSizeBytes() {
		t.Fatalf("dump %v, object %+v (%v)", &dumped, info, err)
	}
	if _, err := os.Stat(filepath.Join(z.Env["DATA_DIR"], "objects")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the dump touched DATA_DIR/objects: %v", err)
	}
	databases := testinfra.DialBus(t, cfg.WithURL(testinfra.ServiceAMQPURL(t, bus.PrincipalDatabases)), nil)
	var link zonev1.DumpURLReply
	if err := databases.Request(ctx, zonebus.DumpURLQueue("local"), &zonev1.DumpURLRequest{DatabaseId: id, DumpId: dumpID}, &link); err != nil {
		t.Fatal(err)
	}
	if left := time.Until(link.GetExpiresAt().AsTime()); left <= 0 || left > 5*time.Minute {
		t.Fatalf("the URL expires in %v, want within ZONE_DUMP_URL_TTL (5m)", left)
	}
	file := filepath.Join(t.TempDir(), "app.dump")
	resp, err := http.Get(link.GetUrl())
	if err != nil {
		t.Fatal(err)
	}
	downloaded, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || int64(len(downloaded)) != dumped.GetSizeBytes() {
		t.Fatalf("download: %d, %d bytes of %d", resp.StatusCode, len(downloaded), dumped.GetSizeBytes())
	}
	if err := os.WriteFile(file, downloaded, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pg_restore", "--list", file).CombinedOutput(); err != nil || !strings.Contains(string(out), "TABLE DATA public notes") {
		t.Fatalf("pg_restore --list: %v\n%s", err, out)
	}
	// Asked by anyone but the databases service: forbidden; a dump not there: not_found.
	var taken zonev1.DumpURLReply
	err = apps.Request(ctx, zonebus.DumpURLQueue("local"), &zonev1.DumpURLRequest{DatabaseId: id, DumpId: dumpID}, &taken)
	if re, ok := err.(*bus.RemoteError); !ok || re.Code != "forbidden" || taken.GetUrl() != "" {
		t.Fatalf("a dump URL asked by apps: %v", err)
	}
	err = databases.Request(ctx, zonebus.DumpURLQueue("local"), &zonev1.DumpURLRequest{DatabaseId: id, DumpId: uuid.NewString()}, &taken)
	if re, ok := err.(*bus.RemoteError); !ok || re.Code != "not_found" {
		t.Fatalf("the URL of a dump not there: %v", err)
	}
	var refused zonev1.DeleteDumpsReply
	err = deploys.Request(ctx, zonebus.DeleteDumpsQueue("local"), &zonev1.DeleteDumpsRequest{DatabaseId: id, DumpIds: []string{dumpID}}, &refused)
	if re, ok := err.(*bus.RemoteError); !ok || re.Code != "forbidden" {
		t.Fatalf("dumps deleted at deploys' request: %v", err)
	}
	// A pruned dump leaves the bucket when the databases service says so (this one is put
	// there by the test, so the restore below still has the real one).
	prunedID := uuid.NewString()
	if _, err := bucket.Put(ctx, "dumps/"+id+"/"+prunedID+".dump", strings.NewReader("an older dump"), -1, ""); err != nil {
		t.Fatal(err)
	}
	var deleted zonev1.DeleteDumpsReply
	if err := databases.Request(ctx, zonebus.DeleteDumpsQueue("local"), &zonev1.DeleteDumpsRequest{DatabaseId: id, DumpIds: []string{prunedID}}, &deleted); err != nil || deleted.GetDeleted() != 1 {
		t.Fatalf("delete the pruned dump: %d (%v)", deleted.GetDeleted(), err)
	}
	if _, err := bucket.Head(ctx, "dumps/"+id+"/"+prunedID+".dump"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("the pruned dump: %v", err)
	}

	// Restored into a database of its own, reached through the pooler with its own
	// credentials, with the dumped rows.
	restoreID := uuid.NewString()
	restoreName, _ := busapi.DatabaseName(restoreID)
	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseRestore),
		&zonev1.RestoreDatabase{RestoreId: restoreID, AppId: app, Name: restoreName, ObjectKey: key, ConnectionLimit: 3, MaxBytes: 1 << 28})
	var restored zonev1.DatabaseRestored
	testinfra.Eventually(t, 60*time.Second, "zone.database.restored", func() bool {
		b, ok := outboxBody(t, z, zonebus.KeyDatabaseRestored)
		return ok && proto.Unmarshal(b, &restored) == nil && restored.GetRestoreId() == restoreID
	})
	if !restored.GetOk() {
		t.Fatalf("restore: %v", &restored)
	}
	var rc zonev1.DatabaseCredentialsReply
	if err := apps.Request(ctx, zonebus.DatabaseCredentialsQueue("local"), &zonev1.DatabaseCredentialsRequest{DatabaseId: restoreID, AppId: app}, &rc); err != nil {
		t.Fatal(err)
	}
	rconn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable&default_query_exec_mode=simple_protocol", rc.GetUser(), rc.GetPassword(), poolerAddr, rc.GetDatabase()))
	if err != nil {
		t.Fatalf("the restored database through the pooler: %v", err)
	}
	if err := rconn.QueryRow(ctx, "SELECT body FROM notes").Scan(&body); err != nil || body != "kept" {
		t.Fatalf("restored rows: %q (%v)", body, err)
	}
	rconn.Close(ctx)
	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseDrop),
		&zonev1.DropDatabase{DatabaseId: restoreID, AppId: app, Name: restoreName})
	testinfra.Eventually(t, 30*time.Second, "the restore dropped", func() bool { return outboxHas(t, z, zonebus.KeyDatabaseDropped, restoreID) })

	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseDrop),
		&zonev1.DropDatabase{DatabaseId: id, AppId: app, Name: name})
	testinfra.Eventually(t, 30*time.Second, "zone.database.dropped", func() bool { return outboxHas(t, z, zonebus.KeyDatabaseDropped, id) })
	// Its dumps went with it, before it was reported dropped.
	if _, err := bucket.Head(ctx, key); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("a dropped database's dump: %v", err)
	}
	if c, err := pgx.Connect(ctx, url); err == nil {
		err = c.Ping(ctx)
		c.Close(ctx)
		if err == nil {
			t.Fatal("a dropped database is still reached")
		}
	}
}

// Over its cap a database turns read-only: writes are refused, reads go on, and the one
// transaction that begins with SET TRANSACTION READ WRITE may truncate; under 90 % of the cap
// writes resume. Each flip is reported. The cap is lowered by the test-only setting.
func TestZoneDatabaseSizeCap(t *testing.T) {
	poolerAddr := testinfra.FreeAddr(t)
	z := testinfra.Service{
		Name: "zoneagent", Serve: serve, AddrVar: "ZONEAGENT_ADDR", ReadyPath: "/readyz",
		Env: withZoneStore(t, map[string]string{
			"EDGE_TLS_ADDR": "off", // the edge's HTTPS is edge_tls_test.go's
			"EDGE_ADDR":     testinfra.FreeAddr(t), "ZONE_EDGE_HEALTH_ADDR": testinfra.FreeAddr(t), "ZONE_APPS_DIR": t.TempDir(), "APPS_DOMAIN": "apps.test",
			"ZONE_POSTGRES_ADMIN_URL": testinfra.ZoneProvisionerURL(t), "ZONE_POOLER_ADDR": poolerAddr, "ZONE_DATABASES_HEALTH_ADDR": testinfra.FreeAddr(t), "ZONE_DATABASES_DIR": testDatabasesDir(t),
			"DATABASE_SIZE_CHECK_INTERVAL": "200ms", "ZONE_DATABASE_MAX_BYTES_OVERRIDE": "12000000",
		}),
	}.Start(t)
	ns := z.Env["BUS_NAMESPACE"]
	id, app := uuid.NewString(), uuid.NewString()
	name, _ := busapi.DatabaseName(id)
	publishAs(t, ns, bus.PrincipalDatabases, zonebus.CommandKey("local", zonebus.CommandDatabaseCreate),
		&zonev1.CreateDatabase{DatabaseId: id, AppId: app, Name: name, ConnectionLimit: 3, MaxBytes: 1 << 28})
	testinfra.Eventually(t, 30*time.Second, "zone.database.ready", func() bool { return outboxHas(t, z, zonebus.KeyDatabaseReady, id) })

	var cfg bus.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, z.Env); err != nil {
		t.Fatal(err)
	}
	apps := testinfra.DialBus(t, cfg.WithURL(testinfra.ServiceAMQPURL(t, bus.PrincipalApps)), nil)
	var reply zonev1.DatabaseCredentialsReply
	if err := apps.Request(context.Background(), zonebus.DatabaseCredentialsQueue("local"), &zonev1.DatabaseCredentialsRequest{DatabaseId: id, AppId: app}, &reply); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable&default_query_exec_mode=simple_protocol", reply.GetUser(), reply.GetPassword(), poolerAddr, reply.GetDatabase()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// About 8 MB of rows that do not compress, on an empty database's 7.5 MB.
	if _, err := conn.Exec(ctx, "CREATE TABLE big (id int, body text); INSERT INTO big SELECT g, md5(g::text) || md5((g+1)::text) FROM generate_series(1, 80000) g"); err != nil {
		t.Fatal(err)
	}
	testinfra.Eventually(t, 30*time.Second, "zone.database.read_only", func() bool { return outboxHas(t, z, zonebus.KeyDatabaseReadOnly, id) })

	if _, err := conn.Exec(ctx, "INSERT INTO big VALUES (0, 'more')"); !isSQLState(err, "25006") {
		t.Fatalf("a write over the cap: %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM big").Scan(&n); err != nil || n != 80000 {
		t.Fatalf("a read over the cap: %d, %v", n, err)
	}
	// The documented way out, in one transaction through the pooler.
	if _, err := conn.Exec(ctx, "BEGIN; SET TRANSACTION READ WRITE; TRUNCATE big; COMMIT"); err != nil {
		t.Fatalf("the recovery transaction: %v", err)
	}
	testinfra.Eventually(t, 30*time.Second, "zone.database.writable", func() bool { return outboxHas(t, z, zonebus.KeyDatabaseWritable, id) })
	if _, err := conn.Exec(ctx, "INSERT INTO big VALUES (1, 'again')"); err != nil {
		t.Fatalf("a write once under 90 %% of the cap: %v", err)
	}
}

func isSQLState(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// outboxBody is the body of the zone's newest published event of key.
func outboxBody(t *testing.T, z *testinfra.Running, key string) ([]byte, bool) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, z.Env["ZONEAGENT_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var b []byte
	err = conn.QueryRow(ctx, `SELECT body FROM outbox WHERE routing_key = $1 AND sent_at IS NOT NULL ORDER BY id DESC LIMIT 1`, key).Scan(&b)
	return b, err == nil
}

// testDatabasesDir is a folder for the database host, removed after the test: the host's user
// reaches it (the agent makes it that user's), which it could not under t.TempDir().
func testDatabasesDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tori-test-dbhost-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
