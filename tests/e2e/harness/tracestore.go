package harness

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

var (
	traceStoreOnce sync.Once
	traceStoreBin  string
	traceStoreErr  error
)

// traceStoreBinary is Jaeger as scripts/tracestore.sh builds it (TRACESTORE_BIN when set,
// as scripts/test.sh sets it after building it in the background).
func traceStoreBinary(t testing.TB) string {
	t.Helper()
	traceStoreOnce.Do(func() {
		if traceStoreBin = os.Getenv("TRACESTORE_BIN"); traceStoreBin != "" {
			return
		}
		out, err := exec.Command(filepath.Join(RepoRoot(), "scripts", "tracestore.sh")).Output()
		if err != nil {
			traceStoreErr = fmt.Errorf("scripts/tracestore.sh: %v", err)
			return
		}
		traceStoreBin = strings.TrimSpace(string(out))
	})
	if traceStoreErr != nil {
		t.Fatalf("harness: %v", traceStoreErr)
	}
	return traceStoreBin
}

// TraceStore is a running Jaeger: OTLP (HTTP) in at OTLP, its query API at Query.
type TraceStore struct {
	OTLP  string // http://host:port, for OTEL_EXPORTER_OTLP_ENDPOINT
	Query string // http://host:port, Jaeger's /api
}

// StartTraceStore runs a trace store of the test's own, on free ports, with the project's
// configuration (deployments/tracestore/jaeger.yaml), until the test ends.
func StartTraceStore(t testing.TB) *TraceStore {
	t.Helper()
	bin := traceStoreBinary(t)
	otlp, query, grpc := testinfra.FreeAddr(t), testinfra.FreeAddr(t), testinfra.FreeAddr(t)
	cmd := exec.Command(bin, "--config", filepath.Join(RepoRoot(), "deployments", "tracestore", "jaeger.yaml"))
	cmd.Env = append(os.Environ(), "TRACES_OTLP_ADDR="+otlp, "TRACES_QUERY_ADDR="+query, "TRACES_QUERY_GRPC_ADDR="+grpc)
	logPath := filepath.Join(t.TempDir(), "tracestore.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("harness: start the trace store: %v", err)
	}
	logf.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	ts := &TraceStore{OTLP: "http://" + otlp, Query: "http://" + query}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("harness: the trace store exited at start:\n%s", tail(string(b), 4000))
		default:
		}
		if resp, err := http.Get(ts.Query + "/api/services"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return ts
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("harness: the trace store's query API did not answer:\n%s", tail(string(b), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
