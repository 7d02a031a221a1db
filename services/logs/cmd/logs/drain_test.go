package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/testinfra"
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
)

// Two replicas of the service binary share a drain while zones stream lines; the one holding
// the drain is SIGKILLed mid-delivery and restarted. The receiver gets every line, and the
// repeats (the batch in flight at the kill) are few; the test prints their count.
func TestDrainSurvivesAKilledReplica(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "logs")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var mu sync.Mutex
	seen := map[string]int{} // message → times received
	var batches atomic.Int64
	rcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc := bufio.NewScanner(r.Body)
		sc.Buffer(nil, 1<<20)
		mu.Lock()
		for sc.Scan() {
			var l struct{ Message string }
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				seen[l.Message]++
			}
		}
		mu.Unlock()
		batches.Add(1)
		time.Sleep(20 * time.Millisecond) // a receiver's own work: the kill lands mid-delivery
		w.WriteHeader(http.StatusOK)
	}))
	defer rcv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	vars := testinfra.ServiceEnv(t, "logs")
	vars["LOG_LEVEL"] = "warn"
	vars["LOGS_DRAIN_TEST_HOST"] = rcv.Listener.Addr().String()
	vars["LOGS_DRAIN_TEST_CA"] = caFile
	vars["LOGS_DRAIN_LEASE"] = "3s"
	env := os.Environ()
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	addrs := []string{vars["LOGS_ADDR"], freeAddr(t)}
	logFile := filepath.Join(t.TempDir(), "logs.log")
	procs := map[int]*process{} // pid → process
	envOf := func(i int) []string { return append(append([]string{}, env...), "LOGS_ADDR="+addrs[i]) }
	for i := range addrs {
		p := startProcess(t, bin, envOf(i), logFile, addrs[i])
		procs[p.cmd.Process.Pid] = p
	}

	db := logstest.OpenDB(t, vars["DATABASE_URL"], vars["LOGS_DATABASE_URL"])
	pub := logstest.NewPublisher(t, vars["DATABASE_URL"], logstest.BusConfigOf(t, vars), logstest.ZonePrincipal)
	logstest.AwaitIngest(t, pub, db)
	app := logs.App{ID: uuid.NewString(), AccountID: "team-drain", Slug: "shop"}
	db.SaveApp(t, app)
	d := drains.Drain{ID: uuid.NewString(), AppID: app.ID, AccountID: app.AccountID, Kind: drains.KindHTTPS,
		URL: "https://" + rcv.Listener.Addr().String() + "/", Secret: "s", CreatedAt: time.Now()}
	if err := db.Store.CreateDrain(context.Background(), d, 1, "nestling"); err != nil {
		t.Fatal(err)
	}

	const nBatches, perBatch = 200, 25
	const total = nBatches * perBatch
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		for b := range nBatches {
			batch := &logsv1.LogBatch{}
			now := timestamppb.Now()
			for i := range perBatch {
				batch.Entries = append(batch.Entries, &logsv1.LogEntry{AppId: app.ID, Stream: "stdout", Timestamp: now, Message: fmt.Sprintf("b%d-%d", b, i)})
			}
			pub.Publish(t, zonebus.KeyLogBatch, batch)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	received := func() (all, distinct int) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range seen {
			all += n
		}
		return all, len(seen)
	}
	testinfra.Eventually(t, 30*time.Second, "the drain delivering", func() bool { _, d := received(); return d >= total/5 })

	// The replica holding the drain (its lease names its pid) is killed mid-stream.
	var owner string
	if err := db.Pool.QueryRow(context.Background(), `SELECT lease_owner FROM drains WHERE id = $1`, d.ID).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.Split(owner, "/")[1])
	victim, ok := procs[pid]
	if !ok {
		t.Fatalf("lease owner %q is none of the replicas", owner)
	}
	victim.kill(t)
	_, atKill := received()
	t.Logf("killed the holder (%s) with %d of %d lines delivered", owner, atKill, total)
	if atKill >= total {
		t.Fatal("the kill did not land mid-stream")
	}
	// Restarted on its own address, as a supervisor would.
	for i, a := range addrs {
		if victim.cmd.Env[len(victim.cmd.Env)-1] == "LOGS_ADDR="+a {
			startProcess(t, bin, envOf(i), logFile, a)
		}
	}
	<-streamed
	testinfra.Eventually(t, 60*time.Second, "every line delivered", func() bool { _, d := received(); return d == total })
	time.Sleep(500 * time.Millisecond) // a repeat still on its way is counted too
	all, distinct := received()
	fmt.Printf("drain across a killed replica: %d lines, %d received, %d repeats, %d batches\n", distinct, all, all-distinct, batches.Load())
	if distinct != total {
		t.Fatalf("%d distinct lines, want %d", distinct, total)
	}
	// At most the batch in flight at the kill comes again.
	if all-distinct > 1000 {
		t.Fatalf("%d repeats: more than one batch", all-distinct)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
