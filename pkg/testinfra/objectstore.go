package testinfra

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tori.dev/pkg/objectstore/versityadmin"
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
	t.Cleanup(func() { logf.Close() }) // after the process's own cleanup, which runs first
	// The root credentials go by environment, not argv: argv is world-readable in /proc.
	env := append(os.Environ(), "ROOT_ACCESS_KEY="+store.AccessKey, "ROOT_SECRET_KEY="+store.SecretKey)
	exited := runUntilCleanup(t, bin, env, logf, "--port", addr, "--iam-dir", iam, "--quiet", "posix", data)
	awaitUp(t, "the S3 server", exited, logf, 30*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	store.URL = "http://" + addr
	return store
}

// Holding makes, as bin/bootstrap does, an account of the least role with a secret of its
// own and a bucket it owns, and returns the variables bootstrap writes to the holder's file:
// OBJECT_STORE_URL and <prefix>_OBJECT_STORE_ACCESS_KEY, _SECRET_KEY, _BUCKET (prefix
// "DEPLOYS" with "tori-deploys" and "tori-artifacts"; "ZONEAGENT" with "tori-zone-<zone>").
func (o ObjectStore) Holding(t testing.TB, prefix, access, bucket string) map[string]string {
	t.Helper()
	admin := versityadmin.Client{URL: o.URL, AccessKey: o.AccessKey, SecretKey: o.SecretKey}
	secret := randomHex(16)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.EnsureUser(ctx, access, secret); err != nil {
		t.Fatalf("object store account %s: %v", access, err)
	}
	if err := admin.EnsureBucket(ctx, bucket, access); err != nil {
		t.Fatalf("object store bucket %s: %v", bucket, err)
	}
	pre := prefix + "_OBJECT_STORE_"
	return map[string]string{
		"OBJECT_STORE_URL": o.URL, pre + "ACCESS_KEY": access, pre + "SECRET_KEY": secret, pre + "BUCKET": bucket,
	}
}
