package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/logs/internal/config"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/service"
)

const signingKey = "service-test-key"

// running is a logs service run in-process with the real bus and database.
type running struct {
	addr string
	stop func()
}

func start(t *testing.T, db *logstest.DB, busCfg bus.Config, env map[string]string) *running {
	t.Helper()
	addr := freeAddr(t)
	vars := map[string]string{
		"LOGS_ADDR":             addr,
		"DATABASE_URL":          db.AdminURL,
		"GATEWAY_SIGNING_KEY":   signingKey,
		"AMQP_URL":              busCfg.URL,
		"BUS_NAMESPACE":         busCfg.Namespace,
		"BUS_QUEUE_TYPE":        busCfg.QueueType,
		"BUS_QUEUE_EXPIRES":     busCfg.QueueExpires.String(),
		"BUS_BASE_BACKOFF":      "50ms",
		"LOGS_CLEANUP_INTERVAL": "100ms",
	}
	for k, v := range env {
		vars[k] = v
	}
	var cfg config.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, vars); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- service.Run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), "test") }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service stopped with %v", err)
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	logstest.Eventually(t, 30*time.Second, "healthz answers", func() (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("service stopped at start: %v", err)
		default:
		}
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false, err
		}
		res.Body.Close()
		return res.StatusCode == 200, nil
	})
	return &running{addr: addr, stop: stop}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// getLogs reads an app's logs as the gateway would forward the request.
func (r *running) getLogs(t *testing.T, account, slug string) (int, map[string]any) {
	t.Helper()
	path := "/api/apps/" + slug + "/logs"
	req, err := http.NewRequest("GET", "http://"+r.addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	callerid.Sign([]byte(signingKey), req.Header.Set, callerid.Caller{AccountID: account, UserID: "u", TokenKind: "session", TokenID: "t"}, "GET", path, time.Now())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, body
}

// A batch the broker delivers twice (the relay publishes its outbox row again, as it does
// after a lost confirm) is stored once.
func TestRedeliveredBatchIsStoredOnce(t *testing.T) {
	db := logstest.NewDB(t)
	busCfg := logstest.BusConfig(t)
	// One batch at a time, in queue order: once a later batch is stored, the duplicate
	// before it has been handled.
	start(t, db, busCfg, map[string]string{"LOGS_INGEST_PREFETCH": "1"})
	pub := logstest.NewPublisher(t, db, busCfg)
	logstest.AwaitIngest(t, pub, db)

	app, marker := uuid.NewString(), uuid.NewString()
	id := pub.Publish(t, "zone.logs.batch", logstest.Batch(app, 250, "once"))
	logstest.Eventually(t, 20*time.Second, "batch stored", func() (bool, error) { return db.Count(t, app) == 250, nil })

	if _, err := pub.Pool.Exec(context.Background(), `UPDATE outbox SET sent_at = NULL WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	pub.Publish(t, "zone.logs.batch", logstest.Batch(marker, 1, "after the duplicate"))
	logstest.Eventually(t, 20*time.Second, "marker stored", func() (bool, error) { return db.Count(t, marker) == 1, nil })
	var resent bool
	if err := pub.Pool.QueryRow(context.Background(), `SELECT sent_at IS NOT NULL FROM outbox WHERE id = $1`, id).Scan(&resent); err != nil || !resent {
		t.Fatalf("the duplicate was not published again: %v", err)
	}
	if n := db.Count(t, app); n != 250 {
		t.Fatalf("%d entries after a redelivery, want 250", n)
	}
}

// The whole deletion path over the bus: apps.app.deleted makes the route 404 at once, the
// entries go in the background, and logs.app.cleaned is published.
func TestDeletedAppOverTheBus(t *testing.T) {
	db := logstest.NewDB(t)
	busCfg := logstest.BusConfig(t)
	svc := start(t, db, busCfg, nil)
	pub := logstest.NewPublisher(t, db, busCfg)
	logstest.AwaitIngest(t, pub, db)

	app := uuid.NewString()
	pub.Publish(t, "apps.app.created", &appsv1.AppCreated{AppId: app, AccountId: "acc", Slug: "doomed", Kind: "service", CreatedAt: timestamppb.Now()})
	for i := range 4 {
		pub.Publish(t, "zone.logs.batch", logstest.Batch(app, 500, "line "+strconv.Itoa(i)))
	}
	logstest.Eventually(t, 20*time.Second, "entries stored and readable", func() (bool, error) {
		status, body := svc.getLogs(t, "acc", "doomed")
		return status == 200 && db.Count(t, app) == 2000, fmt.Errorf("status %d %v", status, body["error"])
	})
	if status, _ := svc.getLogs(t, "other-account", "doomed"); status != 404 {
		t.Fatalf("another account reads the app: %d", status)
	}

	pub.Publish(t, "apps.app.deleted", &appsv1.AppDeleted{AppId: app, AccountId: "acc", Slug: "doomed", DeletedAt: timestamppb.Now()})
	deletedAt := time.Now()
	logstest.Eventually(t, 5*time.Second, "404 after the delete", func() (bool, error) {
		status, _ := svc.getLogs(t, "acc", "doomed")
		return status == 404, nil
	})
	t.Logf("route answered 404 %s after the delete was published", time.Since(deletedAt).Round(time.Millisecond))

	// The confirmation is in the logs service's outbox and the relay has published it.
	logstest.Eventually(t, 20*time.Second, "logs.app.cleaned published", func() (bool, error) {
		var body []byte
		err := db.Pool.QueryRow(context.Background(), `
			SELECT body FROM outbox WHERE routing_key = 'logs.app.cleaned' AND sent_at IS NOT NULL`).Scan(&body)
		if err != nil {
			return false, err
		}
		var m appsv1.AppCleanupConfirmed
		if err := proto.Unmarshal(body, &m); err != nil || m.GetAppId() != app || m.GetService() != "logs" {
			t.Fatalf("confirmation %v (%v)", &m, err)
		}
		return true, nil
	})
	if n := db.Count(t, app); n != 0 {
		t.Fatalf("%d entries left after the confirmation", n)
	}
}
