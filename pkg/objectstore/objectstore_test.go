package objectstore_test

import (
	"context"
	"testing"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/objectstore/objectstoretest"
	"tori.dev/pkg/objectstore/versityadmin"
	"tori.dev/pkg/testinfra"
)

// TestContract runs the object-store contract against the real S3 server, through an
// account of the least role that owns its bucket (as each workload's are).
func TestContract(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	objectstoretest.Run(t, holder(t, srv, "contract", "contract-bucket"))
}

// holder makes an account and a bucket it owns, as bootstrap does, and returns the store
// seen through that account's credentials.
func holder(t testing.TB, srv testinfra.ObjectStore, access, bucket string) *objectstore.Store {
	t.Helper()
	return holderWith(t, srv, access, bucket, false)
}

// holderWith is holder with Config.ReadAhead as given.
func holderWith(t testing.TB, srv testinfra.ObjectStore, access, bucket string, readAhead bool) *objectstore.Store {
	t.Helper()
	admin := versityadmin.Client{URL: srv.URL, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}
	secret := "secret-of-" + access + "-0123456789"
	ctx := context.Background()
	if err := admin.EnsureUser(ctx, access, secret); err != nil {
		t.Fatal(err)
	}
	if err := admin.EnsureBucket(ctx, bucket, access); err != nil {
		t.Fatal(err)
	}
	s, err := objectstore.New(objectstore.Config{URL: srv.URL, AccessKey: access, SecretKey: secret, Bucket: bucket, ReadAhead: readAhead})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
