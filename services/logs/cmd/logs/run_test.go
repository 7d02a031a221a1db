package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	logsbus "tori.dev/proto/tori/logs/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/logstest"
)

// running is the logs service run in-process, with its database and a stand-in for the
// services that publish what it consumes.
type running struct {
	*testinfra.Running
	db  *logstest.DB
	pub *logstest.Publisher
}

// start runs the service with env added to its environment and returns once its ingest
// queue takes batches.
func start(t *testing.T, env map[string]string) *running {
	t.Helper()
	vars := map[string]string{"LOGS_CLEANUP_INTERVAL": "100ms"}
	maps.Copy(vars, env)
	r := testinfra.Service{Name: "logs", Serve: serve, Env: vars}.Start(t)
	db := logstest.OpenDB(t, r.Env["DATABASE_URL"], r.Env["LOGS_DATABASE_URL"])
	pub := logstest.NewPublisher(t, r.Env["DATABASE_URL"], logstest.BusConfigOf(t, r.Env), logstest.ZonePrincipal)
	logstest.AwaitIngest(t, pub, db)
	return &running{Running: r, db: db, pub: pub}
}

// getLogs reads an app's logs as the gateway would forward the request.
func (r *running) getLogs(t *testing.T, account, slug string) (int, map[string]any) {
	t.Helper()
	path := "/api/apps/" + slug + "/logs"
	req, err := http.NewRequest("GET", r.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	callerid.Sign([]byte(r.Env["GATEWAY_SIGNING_KEY"]), req.Header.Set, callerid.Caller{AccountID: account, UserID: "u", TokenKind: "session", TokenID: "t"}, "GET", req.Host, path, time.Now())
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
	// One batch at a time, in queue order: once a later batch is stored, the duplicate
	// before it has been handled.
	svc := start(t, map[string]string{"LOGS_INGEST_PREFETCH": "1"})
	db, pub := svc.db, svc.pub

	app, marker := uuid.NewString(), uuid.NewString()
	id := pub.Publish(t, zonebus.KeyLogBatch, logstest.Batch(app, 250, "once"))
	testinfra.Eventually(t, 20*time.Second, "batch stored", func() bool { return db.Count(t, app) == 250 })

	if _, err := pub.Pool.Exec(context.Background(), `UPDATE outbox SET sent_at = NULL WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	// The marker goes out only once the duplicate has: the relay may take a newer row first.
	testinfra.Eventually(t, 20*time.Second, "the duplicate published again", func() bool {
		var resent bool
		err := pub.Pool.QueryRow(context.Background(), `SELECT sent_at IS NOT NULL FROM outbox WHERE id = $1`, id).Scan(&resent)
		return err == nil && resent
	})
	pub.Publish(t, zonebus.KeyLogBatch, logstest.Batch(marker, 1, "after the duplicate"))
	testinfra.Eventually(t, 20*time.Second, "marker stored", func() bool { return db.Count(t, marker) == 1 })
	if n := db.Count(t, app); n != 250 {
		t.Fatalf("%d entries after a redelivery, want 250", n)
	}
}

// The whole deletion path over the bus: apps.app.deleted makes the route 404 at once, the
// entries go in the background, and logs.app.cleaned is published.
func TestDeletedAppOverTheBus(t *testing.T) {
	svc := start(t, nil)
	db, pub := svc.db, svc.pub
	// The apps service, as it answers a lookup for an app not (or no longer) the caller's:
	// with nothing. Without it a miss in the copy is 503, never a 404 that may be false.
	conn := testinfra.DialBus(t, logstest.BusConfigOf(t, svc.Env), nil)
	testinfra.Background(t, "apps lookup", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueAppLookup, func(context.Context, bus.Delivery) (proto.Message, error) {
			return &appsv1.AppLookupReply{}, nil
		})
	})

	app, acc := uuid.NewString(), uuid.NewString()
	billingPub := logstest.NewPublisher(t, svc.Env["DATABASE_URL"], logstest.BusConfigOf(t, svc.Env), bus.PrincipalBilling)
	appsPub := logstest.NewPublisher(t, svc.Env["DATABASE_URL"], logstest.BusConfigOf(t, svc.Env), bus.PrincipalApps)
	// The account's plan copy, as billing's event feeds it: without one (and no billing to
	// ask) the route answers 503.
	billingPub.Publish(t, billingbus.KeyPlanChanged, &billingv1.AccountPlanChanged{
		AccountId: acc, Plan: "nestling", Version: 1, Limits: &billingv1.PlanLimits{LogRetentionDays: 1},
	})
	appsPub.Publish(t, appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: app, AccountId: acc, Slug: "doomed", Kind: "service", CreatedAt: timestamppb.Now()})
	for i := range 4 {
		pub.Publish(t, zonebus.KeyLogBatch, logstest.Batch(app, 500, "line "+strconv.Itoa(i)))
	}
	testinfra.Eventually(t, 20*time.Second, "entries stored and readable", func() bool {
		status, _ := svc.getLogs(t, acc, "doomed")
		return status == 200 && db.Count(t, app) == 2000
	})
	if status, _ := svc.getLogs(t, uuid.NewString(), "doomed"); status != 404 {
		t.Fatalf("another account reads the app: %d", status)
	}

	appsPub.Publish(t, appsbus.KeyAppDeleted, &appsv1.AppDeleted{AppId: app, AccountId: acc, Slug: "doomed", DeletedAt: timestamppb.Now()})
	deletedAt := time.Now()
	testinfra.Eventually(t, 5*time.Second, "404 after the delete", func() bool {
		status, _ := svc.getLogs(t, acc, "doomed")
		return status == 404
	})
	t.Logf("route answered 404 %s after the delete was published", time.Since(deletedAt).Round(time.Millisecond))

	// The confirmation is in the logs service's outbox and the relay has published it.
	testinfra.Eventually(t, 20*time.Second, "logs.app.cleaned published", func() bool {
		var body []byte
		err := db.Pool.QueryRow(context.Background(), `
			SELECT body FROM outbox WHERE routing_key = $1 AND sent_at IS NOT NULL`, logsbus.KeyAppCleaned).Scan(&body)
		if err != nil {
			return false
		}
		var m appsv1.AppCleanupConfirmed
		if err := proto.Unmarshal(body, &m); err != nil || m.GetAppId() != app || m.GetService() != "logs" {
			t.Fatalf("confirmation %v (%v)", &m, err)
		}
		return true
	})
	if n := db.Count(t, app); n != 0 {
		t.Fatalf("%d entries left after the confirmation", n)
	}
}

// The logs service is killed with SIGKILL while zones stream lines to it; after it starts
// again, every line is stored, and none twice.
func TestKilledWhileIngestingLosesNothing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "logs")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	vars := testinfra.ServiceEnv(t, "logs")
	vars["LOG_LEVEL"] = "warn"
	env := os.Environ()
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	addr := vars["LOGS_ADDR"]
	logFile := filepath.Join(t.TempDir(), "logs.log")
	first := startProcess(t, bin, env, logFile, addr)

	db := logstest.OpenDB(t, vars["DATABASE_URL"], vars["LOGS_DATABASE_URL"])
	pub := logstest.NewPublisher(t, vars["DATABASE_URL"], logstest.BusConfigOf(t, vars), logstest.ZonePrincipal)
	logstest.AwaitIngest(t, pub, db)

	const batches, perBatch = 400, 100
	const total = batches * perBatch
	app := uuid.NewString()
	var published atomic.Int64
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		for b := range batches {
			batch := &logsv1.LogBatch{}
			now := timestamppb.Now()
			for i := range perBatch {
				batch.Entries = append(batch.Entries, &logsv1.LogEntry{
					AppId: app, Stream: "stdout", Timestamp: now, Message: fmt.Sprintf("b%d-%d", b, i),
				})
			}
			pub.Publish(t, zonebus.KeyLogBatch, batch)
			published.Add(1)
			time.Sleep(time.Millisecond) // a zone's pace, not a wait
		}
	}()

	testinfra.Eventually(t, 30*time.Second, "some lines stored", func() bool { return db.Count(t, app) >= total/10 })
	first.kill(t)
	atKill, sentAtKill := db.Count(t, app), published.Load()
	t.Logf("killed with %d of %d lines stored, %d of %d batches published", atKill, total, sentAtKill, batches)
	if atKill >= total || sentAtKill >= batches {
		t.Fatalf("the kill did not land mid-stream (%d stored, %d batches published)", atKill, sentAtKill)
	}

	// Lines keep arriving while the service is down.
	testinfra.Eventually(t, 30*time.Second, "batches published while the service is down", func() bool {
		return published.Load() > sentAtKill
	})
	// One batch at a time after the restart, in queue order, so the marker below is handled
	// after every redelivery before it.
	startProcess(t, bin, append(env, "LOGS_INGEST_PREFETCH=1"), logFile, addr)
	<-streamed
	testinfra.Eventually(t, 60*time.Second, "every line stored after the restart", func() bool { return db.Count(t, app) >= total })
	// A late duplicate would land before the marker.
	marker := uuid.NewString()
	pub.Publish(t, zonebus.KeyLogBatch, logstest.Batch(marker, 1, "after every batch"))
	testinfra.Eventually(t, 30*time.Second, "marker stored", func() bool { return db.Count(t, marker) == 1 })
	var rows, distinct int
	err := db.Pool.QueryRow(context.Background(),
		`SELECT count(*), count(DISTINCT message) FROM log_entries WHERE app_id = $1`, app).Scan(&rows, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	if rows != total || distinct != total {
		t.Fatalf("%d rows, %d distinct lines; want %d of each", rows, distinct, total)
	}
}

// process is one run of the service binary.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func startProcess(t *testing.T, bin string, env []string, logFile, addr string) *process {
	t.Helper()
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: exec.Command(bin), exited: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		out.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("service output:\n%s", b)
		}
	})
	testinfra.Eventually(t, 30*time.Second, "healthz answers", func() bool {
		select {
		case <-p.exited:
			b, _ := os.ReadFile(logFile)
			t.Fatalf("service exited at start:\n%s", b)
		default:
		}
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	return p
}

// kill is kill -9: no shutdown code of the service runs.
func (p *process) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// stop asks for a clean stop, and insists after a while.
func (p *process) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
