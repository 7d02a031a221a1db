package testinfra

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ObjectStore is a running S3 server of a test's own and its root credentials: the
// account that makes the workloads' accounts and buckets (versityadmin), as bootstrap does.
type ObjectStore struct {
	URL       string // http://127.0.0.1:port
	AccessKey string // root
	SecretKey string
	DataDir   string // the posix backend's folder: one sub-folder per bucket
}

// StartObjectStore runs the Versity S3 gateway (built once by scripts/objectstore-build.sh
// and named by OBJECTSTORE_BIN) with its posix backend and internal IAM in the test's temp
// dir, on a free port, until the test ends. Without OBJECTSTORE_BIN the test fails: storage
// must never pass by being skipped or faked.
func StartObjectStore(t testing.TB) ObjectStore {
	t.Helper()
	bin := os.Getenv("OBJECTSTORE_BIN")
	if bin == "" {
		t.Fatal("OBJECTSTORE_BIN is not set: build the S3 server once with scripts/objectstore-build.sh and run the tests with OBJECTSTORE_BIN=$(scripts/objectstore-build.sh)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("OBJECTSTORE_BIN=%s: %v; run scripts/objectstore-build.sh", bin, err)
	}
	root := t.TempDir()
	data, iam := filepath.Join(root, "data"), filepath.Join(root, "iam")
	for _, d := range []string{data, iam} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	store := ObjectStore{URL: "", AccessKey: "root-" + randomHex(6), SecretKey: randomHex(20), DataDir: data}
	addr := FreeAddr(t)
	logf, err := os.Create(filepath.Join(root, "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", addr, "--iam-dir", iam, "--quiet", "posix", data)
	// The root credentials go by environment, not argv: argv is world-readable in /proc.
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+store.AccessKey, "ROOT_SECRET_KEY="+store.SecretKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the S3 server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			store.URL = "http://" + addr
			return store
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logf.Name())
			t.Fatalf("the S3 server exited before listening:\n%s", out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logf.Name())
			t.Fatalf("the S3 server did not listen within 30s:\n%s", out)
		}
	}
}
