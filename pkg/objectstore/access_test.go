package objectstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/objectstore/versityadmin"
	"tori.dev/pkg/testinfra"
)

// TestHoldersReachOnlyTheirOwnBucket: each workload's credentials (deploys, one zone, another
// zone) reach their own bucket and nothing of another's, enforced by the real server.
func TestHoldersReachOnlyTheirOwnBucket(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	ctx := context.Background()
	eu := holder(t, srv, "zone-eu", "tori-zone-eu")
	us := holder(t, srv, "zone-us", "tori-zone-us")
	deploys := holder(t, srv, "deploys", "tori-artifacts")
	for _, s := range []*objectstore.Store{eu, us, deploys} {
		if _, err := s.Put(ctx, "own/object", strings.NewReader(s.Bucket()), -1, ""); err != nil {
			t.Fatalf("%s writes its own bucket: %v", s.Bucket(), err)
		}
	}

	// The eu zone's credentials pointed at the us zone's bucket and at the artifacts.
	for _, target := range []string{"tori-zone-us", "tori-artifacts"} {
		intruder, err := objectstore.New(objectstore.Config{URL: srv.URL, AccessKey: "zone-eu", SecretKey: "secret-of-zone-eu-0123456789", Bucket: target})
		if err != nil {
			t.Fatal(err)
		}
		t.Run("eu on "+target, func(t *testing.T) {
			if _, _, err := intruder.Get(ctx, "own/object", nil); !errors.Is(err, objectstore.ErrAccessDenied) {
				t.Errorf("get: %v, want ErrAccessDenied", err)
			}
			if _, err := intruder.Head(ctx, "own/object"); err == nil {
				t.Error("head succeeded")
			}
			if err := intruder.List(ctx, "", func(objectstore.Info) bool { return true }); !errors.Is(err, objectstore.ErrAccessDenied) {
				t.Errorf("list: %v, want ErrAccessDenied", err)
			}
			if _, err := intruder.Put(ctx, "planted", strings.NewReader("x"), 1, ""); !errors.Is(err, objectstore.ErrAccessDenied) {
				t.Errorf("put: %v, want ErrAccessDenied", err)
			}
			if _, err := intruder.Put(ctx, "planted-multipart", io.LimitReader(zeros{}, objectstore.PartSize+1), -1, ""); !errors.Is(err, objectstore.ErrAccessDenied) {
				t.Errorf("multipart put: %v, want ErrAccessDenied", err)
			}
			if err := intruder.Delete(ctx, "own/object"); !errors.Is(err, objectstore.ErrAccessDenied) {
				t.Errorf("delete: %v, want ErrAccessDenied", err)
			}
			// A URL signed with the wrong holder's key opens nothing either.
			u, err := intruder.PresignGet(ctx, "own/object", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("presigned GET = %d, want 403", resp.StatusCode)
			}
		})
	}
	// The objects the intruder aimed at are still there, unchanged, and nothing was planted.
	for _, s := range []*objectstore.Store{us, deploys} {
		rc, _, err := s.Get(ctx, "own/object", nil)
		if err != nil {
			t.Fatalf("%s lost its object: %v", s.Bucket(), err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != s.Bucket() {
			t.Errorf("%s's object = %q", s.Bucket(), b)
		}
		if _, err := s.Head(ctx, "planted"); !errors.Is(err, objectstore.ErrNotFound) {
			t.Errorf("%s: planted object: %v, want ErrNotFound", s.Bucket(), err)
		}
	}

	// Listing the buckets shows a holder its own alone, and a holder may not make buckets.
	c, err := minio.New(strings.TrimPrefix(srv.URL, "http://"), &minio.Options{Creds: credentials.NewStaticV4("zone-eu", "secret-of-zone-eu-0123456789", ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	buckets, err := c.ListBuckets(ctx)
	if err != nil {
		t.Fatalf("list buckets: %v", err)
	}
	var names []string
	for _, b := range buckets {
		names = append(names, b.Name)
	}
	if !slices.Equal(names, []string{"tori-zone-eu"}) {
		t.Errorf("zone-eu lists buckets %v, want only its own", names)
	}
	if err := c.MakeBucket(ctx, "tori-zone-eu-extra", minio.MakeBucketOptions{}); err == nil {
		t.Error("a workload account made a bucket")
	}
	// Nor may it open another's bucket to itself, or remove it.
	grant := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["zone-eu"]},"Action":["s3:*"],"Resource":["arn:aws:s3:::tori-zone-us","arn:aws:s3:::tori-zone-us/*"]}]}`
	if err := c.SetBucketPolicy(ctx, "tori-zone-us", grant); err == nil {
		t.Error("zone-eu set a policy on zone-us's bucket")
	}
	if err := c.RemoveBucket(ctx, "tori-zone-us"); err == nil {
		t.Error("zone-eu removed zone-us's bucket")
	}
	if _, err := us.Head(ctx, "own/object"); err != nil {
		t.Errorf("zone-us's object after zone-eu's attempts: %v", err)
	}
	intruder, _ := objectstore.New(objectstore.Config{URL: srv.URL, AccessKey: "zone-eu", SecretKey: "secret-of-zone-eu-0123456789", Bucket: "tori-zone-us"})
	if _, _, err := intruder.Get(ctx, "own/object", nil); !errors.Is(err, objectstore.ErrAccessDenied) {
		t.Errorf("after the attempts zone-eu reads zone-us's object: %v", err)
	}
}

// TestWrongSecretIsRefused: a holder's access key with another secret reaches nothing.
func TestWrongSecretIsRefused(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	_ = holder(t, srv, "deploys", "tori-artifacts")
	s, err := objectstore.New(objectstore.Config{URL: srv.URL, AccessKey: "deploys", SecretKey: "not-the-secret-0123456789", Bucket: "tori-artifacts"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(context.Background(), "x", strings.NewReader("x"), 1, ""); !errors.Is(err, objectstore.ErrAccessDenied) {
		t.Fatalf("put with a wrong secret: %v, want ErrAccessDenied", err)
	}
}

// TestEnsureIsIdempotent: bootstrap runs at every start; a second run with a new secret
// converges (the old secret stops working) and keeps the bucket's objects.
func TestEnsureIsIdempotent(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	ctx := context.Background()
	s := holder(t, srv, "deploys", "tori-artifacts")
	if _, err := s.Put(ctx, "kept", strings.NewReader("kept"), 4, ""); err != nil {
		t.Fatal(err)
	}
	admin := versityadmin.Client{URL: srv.URL, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}
	if err := admin.EnsureUser(ctx, "deploys", "a-rotated-secret-0123456789"); err != nil {
		t.Fatalf("second EnsureUser: %v", err)
	}
	if err := admin.EnsureBucket(ctx, "tori-artifacts", "deploys"); err != nil {
		t.Fatalf("second EnsureBucket: %v", err)
	}
	rotated, err := objectstore.New(objectstore.Config{URL: srv.URL, AccessKey: "deploys", SecretKey: "a-rotated-secret-0123456789", Bucket: "tori-artifacts"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.Head(ctx, "kept"); err != nil {
		t.Fatalf("after a second run the object is gone or unreachable: %v", err)
	}
	if _, err := s.Head(ctx, "kept"); err == nil {
		t.Fatal("the old secret still works after it was replaced")
	}
	// A non-admin account cannot use the admin API.
	notAdmin := versityadmin.Client{URL: srv.URL, AccessKey: "deploys", SecretKey: "a-rotated-secret-0123456789"}
	if err := notAdmin.EnsureUser(ctx, "evil", "evil-secret-0123456789"); err == nil {
		t.Fatal("a workload account made an account")
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }
