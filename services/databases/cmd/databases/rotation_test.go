package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	databasesbus "tori.dev/proto/tori/databases/v1"
	deploysbus "tori.dev/proto/tori/deploys/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// movedClock is the service's clock for one test, moved by it.
type movedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *movedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *movedClock) Move(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// count is the service's answer to a count(*) query with one argument.
func count(t *testing.T, r *testinfra.Running, query, arg string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, r.Env["DATABASES_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query, arg).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// outboxCount is how many messages under key the service has published.
func outboxCount(t *testing.T, r *testinfra.Running, key string) int {
	return count(t, r, `SELECT count(*) FROM outbox WHERE routing_key = $1`, key)
}

// The rotation route and what retires the old password, through the running service on the
// bus: the zone's confirmation tells the apps service; a deploy made before it going live
// retires nothing, the next one does; a second rotation with no deploy is retired by the
// job once the moved clock passes 24 hours, and not before.
func TestRotationRouteAndItsExpiry(t *testing.T) {
	clk := &movedClock{now: time.Now().UTC()}
	clock = clk.Now
	t.Cleanup(func() { clock = time.Now })
	w := &world{apps: map[[2]string]*appsv1.AppCreated{}}
	acc, other := uuid.NewString(), uuid.NewString()
	r := testinfra.Service{Name: "databases", Serve: serve, Env: map[string]string{"DATABASES_ROTATION_CHECK_INTERVAL": "20ms"}}.Start(t)
	w.serve(t, r.Env)
	a := w.app(acc, "api", "service")
	w.app(acc, "bare", "service")
	ns := r.Env["BUS_NAMESPACE"]
	rotatePath := "/api/apps/api/database/credentials/rotate"
	rotateKey, retireKey := zonebus.CommandKey("local", zonebus.CommandDatabaseRotate), zonebus.CommandKey("local", zonebus.CommandDatabaseRetire)

	_, body := call(t, r, acc, "POST", "/api/apps/api/database")
	id := body["id"].(string)
	if status, body := call(t, r, acc, "POST", rotatePath); status != 409 || body["code"] != "database_not_ready" {
		t.Fatalf("rotate while provisioning: %d %v", status, body)
	}
	for _, tc := range []struct{ account, path string }{
		{other, rotatePath}, {acc, "/api/apps/nope/database/credentials/rotate"}, {acc, "/api/apps/bare/database/credentials/rotate"},
	} {
		if status, body := call(t, r, tc.account, "POST", tc.path); status != 404 || body["error"] != "not found" {
			t.Fatalf("%s: %d %v", tc.path, status, body)
		}
	}
	zoneSays := func(key string) {
		publishAs(t, ns, bus.ZonePrincipal("local"), key, &zonev1.DatabaseChanged{DatabaseId: id, AppId: a.GetAppId(), Zone: "local", At: timestamppb.Now()})
	}
	zoneSays(zonebus.KeyDatabaseReady)
	testinfra.Eventually(t, 20*time.Second, "the database ready", func() bool {
		_, b := call(t, r, acc, "GET", "/api/apps/api/database")
		return b["status"] == "ready"
	})

	status, body := call(t, r, acc, "POST", rotatePath)
	if status != 202 || body["id"] != id || body["status"] != "ready" || len(body) != 5 {
		t.Fatalf("rotate: %d %v", status, body)
	}
	if n := outboxCount(t, r, rotateKey); n != 1 {
		t.Fatalf("%d rotate commands", n)
	}
	deploy := func(key string, deployID string, created time.Time, rollback string) {
		switch key {
		case deploysbus.KeyDeployCreated:
			publishAs(t, ns, bus.PrincipalDeploys, key, &deploysv1.DeployCreated{DeployId: deployID, AppId: a.GetAppId(), AccountId: acc,
				Kind: "image", RollbackOf: rollback, CreatedAt: timestamppb.New(created)})
		case deploysbus.KeyDeployLive:
			publishAs(t, ns, bus.PrincipalDeploys, key, &deploysv1.DeployLive{DeployId: deployID, AppId: a.GetAppId(), AccountId: acc, LiveAt: timestamppb.Now()})
		}
	}
	// Made while the zone has not yet confirmed: its snapshot has the old URL.
	before := uuid.NewString()
	deploy(deploysbus.KeyDeployCreated, before, clk.Now(), "")
	clk.Move(time.Second)
	zoneSays(zonebus.KeyDatabaseRotated)
	testinfra.Eventually(t, 20*time.Second, "the apps service told of the new password", func() bool {
		return outboxCount(t, r, databasesbus.KeyDatabaseRotated) == 1
	})
	clk.Move(time.Minute)
	rollback, next := uuid.NewString(), uuid.NewString()
	deploy(deploysbus.KeyDeployCreated, rollback, clk.Now(), uuid.NewString())
	deploy(deploysbus.KeyDeployCreated, next, clk.Now(), "")
	deploy(deploysbus.KeyDeployLive, before, time.Time{}, "")
	deploy(deploysbus.KeyDeployLive, rollback, time.Time{}, "")
	deploy(deploysbus.KeyDeployLive, next, time.Time{}, "")
	// One queue, in order: when the next deploy's retire is there, the two before it made none.
	testinfra.Eventually(t, 20*time.Second, "the old password retired by the next deploy", func() bool {
		return outboxCount(t, r, retireKey) >= 1
	})
	if n := outboxCount(t, r, retireKey); n != 1 {
		t.Fatalf("%d retire commands after the next deploy, want 1", n)
	}

	// Again, with no deploy: 24 hours on the service's clock.
	if status, _ := call(t, r, acc, "POST", rotatePath); status != 202 {
		t.Fatalf("second rotate: %d", status)
	}
	zoneSays(zonebus.KeyDatabaseRotated)
	testinfra.Eventually(t, 20*time.Second, "the second rotation confirmed", func() bool {
		return outboxCount(t, r, databasesbus.KeyDatabaseRotated) == 2
	})
	clk.Move(23 * time.Hour)
	// A deploy made now is noted only while the rotation is pending: seen, the rotation was
	// still there at 23 hours (the exact boundary is TestRotationRetiresOnNextDeployOrAfter24Hours's).
	marker := uuid.NewString()
	deploy(deploysbus.KeyDeployCreated, marker, clk.Now(), "")
	testinfra.Eventually(t, 20*time.Second, "the marker deploy noted", func() bool {
		return count(t, r, `SELECT count(*) FROM rotation_deploys WHERE deploy_id = $1`, marker) == 1
	})
	if n := outboxCount(t, r, retireKey); n != 1 {
		t.Fatalf("retired before 24 hours: %d retire commands", n)
	}
	clk.Move(time.Hour)
	testinfra.Eventually(t, 20*time.Second, "the old password retired after 24 hours", func() bool {
		return outboxCount(t, r, retireKey) == 2
	})
}
