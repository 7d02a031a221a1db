package objects

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/objectstore/versityadmin"
	"tori.dev/pkg/testinfra"
)

// storeContract is what the deploys service relies on from any Store.
func storeContract(t *testing.T, s Store) {
	ctx := context.Background()
	up, err := s.Create(ctx, "artifacts/a/1.tar")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(up, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "artifacts/a/1.tar"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an uncommitted object is visible: %v", err)
	}
	if err := up.Commit(); err != nil {
		t.Fatal(err)
	}
	if up.Abort() != nil {
		t.Fatal("abort after commit must do nothing")
	}
	if got := read(t, s, "artifacts/a/1.tar"); got != "hello" {
		t.Fatalf("read back %q", got)
	}

	// A large upload given up half way leaves nothing.
	up, _ = s.Create(ctx, "artifacts/a/2.tar")
	if _, err := io.Copy(up, io.LimitReader(zeros{}, 3*objectstore.PartSize/2)); err != nil {
		t.Fatal(err)
	}
	if err := up.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "artifacts/a/2.tar"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an aborted object is visible: %v", err)
	}

	// Walk sees the folder, not a sibling that shares its name's start.
	up, _ = s.Create(ctx, "artifactsX/b")
	io.WriteString(up, "x")
	if err := up.Commit(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := s.Walk(ctx, "artifacts", func(k string, mod time.Time) error {
		if time.Since(mod) > time.Hour || mod.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s modified at %v", k, mod)
		}
		keys = append(keys, k)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "artifacts/a/1.tar" {
		t.Fatalf("walk: %v", keys)
	}
	stop := errors.New("stop")
	if err := s.Walk(ctx, "", func(string, time.Time) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("walk did not return fn's error: %v", err)
	}

	if err := s.Delete(ctx, "artifacts/a/1.tar"); err != nil || s.Delete(ctx, "artifacts/a/1.tar") != nil {
		t.Fatal("delete must be idempotent")
	}
	if _, err := s.Open(ctx, "artifacts/a/1.tar"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a deleted object is readable: %v", err)
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../b", ".tmp/x", "a//b", ""} {
		if _, err := s.Create(ctx, bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}

func TestLocalMeetsTheStoreContract(t *testing.T) {
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storeContract(t, l)
}

// TestS3MeetsTheStoreContract runs the same contract against the real S3 server, as the
// deploys account that owns the artifacts bucket.
func TestS3MeetsTheStoreContract(t *testing.T) {
	s3, _ := artifactsBucket(t)
	storeContract(t, s3)
}

// TestS3UploadRefusedMidStream: credentials that may not write fail the upload (at the
// latest on Commit) and leave nothing behind in the bucket.
func TestS3UploadRefusedMidStream(t *testing.T) {
	owner, srv := artifactsBucket(t)
	admin := versityadmin.Client{URL: srv.URL, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}
	ctx := context.Background()
	if err := admin.EnsureUser(ctx, "tori-zone-eu", "zone-secret-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	zoneStore, err := objectstore.New(objectstore.Config{URL: srv.URL, AccessKey: "tori-zone-eu", SecretKey: "zone-secret-0123456789abcdef", Bucket: "tori-artifacts"})
	if err != nil {
		t.Fatal(err)
	}
	up, err := NewS3(zoneStore).Create(ctx, "artifacts/a/planted.tar")
	if err != nil {
		t.Fatal(err)
	}
	_, werr := io.Copy(up, io.LimitReader(zeros{}, 2*objectstore.PartSize))
	cerr := up.Commit()
	if werr == nil && cerr == nil {
		t.Fatal("a zone wrote into the artifacts bucket")
	}
	if !errors.Is(werr, objectstore.ErrAccessDenied) && !errors.Is(cerr, objectstore.ErrAccessDenied) {
		t.Fatalf("write %v, commit %v: want ErrAccessDenied", werr, cerr)
	}
	if _, err := owner.Open(ctx, "artifacts/a/planted.tar"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused upload left an object: %v", err)
	}
}

// TestS3PresignedArtifact: a presigned URL reads that one artifact without credentials.
func TestS3PresignedArtifact(t *testing.T) {
	s3, _ := artifactsBucket(t)
	ctx := context.Background()
	up, _ := s3.Create(ctx, "artifacts/a/3.tar.gz")
	io.Copy(up, bytes.NewReader([]byte("artifact")))
	if err := up.Commit(); err != nil {
		t.Fatal(err)
	}
	u, err := s3.PresignGet(ctx, "artifacts/a/3.tar.gz", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "artifact" {
		t.Fatalf("presigned GET = %d %q", resp.StatusCode, b)
	}
	if _, err := s3.PresignGet(ctx, "../x", time.Minute); err == nil {
		t.Fatal("presigned an invalid key")
	}
}

func artifactsBucket(t *testing.T) (*S3, testinfra.ObjectStore) {
	t.Helper()
	srv := testinfra.StartObjectStore(t)
	admin := versityadmin.Client{URL: srv.URL, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}
	ctx := context.Background()
	if err := admin.EnsureUser(ctx, "tori-deploys", "deploys-secret-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	if err := admin.EnsureBucket(ctx, "tori-artifacts", "tori-deploys"); err != nil {
		t.Fatal(err)
	}
	store, err := objectstore.New(objectstore.Config{URL: srv.URL, AccessKey: "tori-deploys", SecretKey: "deploys-secret-0123456789abcdef", Bucket: "tori-artifacts"})
	if err != nil {
		t.Fatal(err)
	}
	return NewS3(store), srv
}

func read(t *testing.T, s Store, key string) string {
	t.Helper()
	r, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }
