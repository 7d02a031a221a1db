package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	"tori.dev/services/logs/internal/logstest"
)

// The logs service is killed with SIGKILL while zones stream lines to it; after it starts
// again, every line is stored, and none twice.
func TestKilledWhileIngestingLosesNothing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "logs")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	db := logstest.NewDB(t)
	busCfg := logstest.BusConfig(t)
	addr := freeAddr(t)
	env := append(os.Environ(),
		"LOGS_ADDR="+addr,
		"DATABASE_URL="+db.AdminURL,
		"GATEWAY_SIGNING_KEY=kill-test",
		"AMQP_URL="+busCfg.URL,
		"BUS_NAMESPACE="+busCfg.Namespace,
		"BUS_QUEUE_TYPE="+busCfg.QueueType,
		"BUS_QUEUE_EXPIRES="+busCfg.QueueExpires.String(),
		"LOG_LEVEL=warn",
	)
	logFile := filepath.Join(t.TempDir(), "logs.log")
	first := startProcess(t, bin, env, logFile, addr)

	pub := logstest.NewPublisher(t, db, busCfg)
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
			pub.Publish(t, "zone.logs.batch", batch)
			published.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()

	logstest.Eventually(t, 30*time.Second, "some lines stored", func() (bool, error) { return db.Count(t, app) >= total/10, nil })
	first.kill(t)
	atKill, sentAtKill := db.Count(t, app), published.Load()
	t.Logf("killed with %d of %d lines stored, %d of %d batches published", atKill, total, sentAtKill, batches)
	if atKill >= total || sentAtKill >= batches {
		t.Fatalf("the kill did not land mid-stream (%d stored, %d batches published)", atKill, sentAtKill)
	}

	time.Sleep(300 * time.Millisecond) // lines keep arriving while the service is down
	startProcess(t, bin, env, logFile, addr)
	<-streamed
	logstest.Eventually(t, 60*time.Second, "every line stored after the restart", func() (bool, error) {
		n := db.Count(t, app)
		return n >= total, fmt.Errorf("%d of %d", n, total)
	})
	time.Sleep(500 * time.Millisecond) // a late duplicate would land now
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
	logstest.Eventually(t, 30*time.Second, "healthz answers", func() (bool, error) {
		select {
		case <-p.exited:
			b, _ := os.ReadFile(logFile)
			t.Fatalf("service exited at start:\n%s", b)
		default:
		}
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false, err
		}
		res.Body.Close()
		return res.StatusCode == 200, nil
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

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
