package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
)

func TestBucketSafeZoneNames(t *testing.T) {
	for zone, want := range map[string]string{
		"local":     "local",
		"eu_west":   "eu-west",
		"EU-West-1": "eu-west-1",
		"_us_":      "us",
		"a.b c":     "a-b-c",
		"___":       "",
	} {
		if got := bucketSafe(zone); got != want {
			t.Errorf("bucketSafe(%q) = %q, want %q", zone, got, want)
		}
	}
}

// TestStoreHoldingsAgainstTheRealServer: bootstrap makes deploys' and each zone's account
// and bucket on the real S3 server; each file's credentials reach that holder's bucket and
// not another's; a second run keeps the secrets and the objects; services without blobs
// get no object-store variables.
func TestStoreHoldingsAgainstTheRealServer(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	ctx := context.Background()
	files := map[string]map[string]string{} // zone/principal → its file
	for _, zone := range []string{"eu", "us"} {
		s := settings{Zone: zone, Credentials: credentialsInFiles, ObjectStoreURL: srv.URL,
			ObjectStoreAdminAccess: srv.AccessKey, ObjectStoreAdminSecret: srv.SecretKey}
		for _, p := range principals(zone) {
			if zone == "us" && p.Name != "zoneagent" {
				continue // one control plane, two zones
			}
			file := map[string]string{}
			if err := ensureStoreHolding(ctx, s, p, file); err != nil {
				t.Fatalf("%s/%s: %v", zone, p.Name, err)
			}
			files[zone+"/"+p.Name] = file
		}
	}
	for key, file := range files {
		_, name, _ := strings.Cut(key, "/")
		has := file[objectStoreURLVar] != ""
		if want := name == "deploys" || name == "zoneagent"; has != want {
			t.Errorf("%s: has object-store credentials = %v, want %v (%v)", key, has, want, keys(file))
		}
	}

	store := func(key, bucket string) *objectstore.Store {
		t.Helper()
		f := files[key]
		pre := strings.ToUpper(strings.SplitN(key, "/", 2)[1]) + "_OBJECT_STORE_"
		if bucket == "" {
			bucket = f[pre+"BUCKET"]
		}
		s, err := objectstore.New(objectstore.Config{URL: f[objectStoreURLVar], AccessKey: f[pre+"ACCESS_KEY"], SecretKey: f[pre+"SECRET_KEY"], Bucket: bucket})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := files["eu/zoneagent"]["ZONEAGENT_OBJECT_STORE_BUCKET"]; got != "tori-zone-eu" {
		t.Fatalf("eu zone's bucket = %q, want tori-zone-eu", got)
	}
	for _, key := range []string{"eu/deploys", "eu/zoneagent", "us/zoneagent"} {
		if _, err := store(key, "").Put(ctx, "probe", strings.NewReader(key), -1, ""); err != nil {
			t.Fatalf("%s cannot write its own bucket: %v", key, err)
		}
	}
	for _, tc := range []struct{ who, bucket string }{
		{"eu/zoneagent", "tori-zone-us"},
		{"us/zoneagent", "tori-zone-eu"},
		{"eu/zoneagent", "tori-artifacts"},
		{"eu/deploys", "tori-zone-eu"},
	} {
		s := store(tc.who, tc.bucket)
		if _, _, err := s.Get(ctx, "probe", nil); !errors.Is(err, objectstore.ErrAccessDenied) {
			t.Errorf("%s reading %s: %v, want ErrAccessDenied", tc.who, tc.bucket, err)
		}
		if err := s.List(ctx, "", func(objectstore.Info) bool { return true }); !errors.Is(err, objectstore.ErrAccessDenied) {
			t.Errorf("%s listing %s: %v, want ErrAccessDenied", tc.who, tc.bucket, err)
		}
	}

	// Again, as at every make run: the file's secret is kept and still works.
	s := settings{Zone: "eu", Credentials: credentialsInFiles, ObjectStoreURL: srv.URL,
		ObjectStoreAdminAccess: srv.AccessKey, ObjectStoreAdminSecret: srv.SecretKey}
	deploys := principals("eu")[0]
	for _, p := range principals("eu") {
		if p.Name == "deploys" {
			deploys = p
		}
	}
	before := files["eu/deploys"]["DEPLOYS_OBJECT_STORE_SECRET_KEY"]
	if err := ensureStoreHolding(ctx, s, deploys, files["eu/deploys"]); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if after := files["eu/deploys"]["DEPLOYS_OBJECT_STORE_SECRET_KEY"]; after != before || len(after) < 32 {
		t.Fatalf("second run changed or weakened the secret")
	}
	if _, err := store("eu/deploys", "").Head(ctx, "probe"); err != nil {
		t.Fatalf("after the second run deploys cannot read its object: %v", err)
	}
}

// TestStoreHoldingOffline: -offline (compose, Kubernetes) writes the credentials and reaches
// nothing; the in-cluster run refuses to make up a secret nobody would be handed.
func TestStoreHoldingOffline(t *testing.T) {
	ctx := context.Background()
	var deploys principal
	for _, p := range principals("eu") {
		if p.Name == "deploys" {
			deploys = p
		}
	}
	// An address nothing listens on: reaching it would fail the run.
	s := settings{Zone: "eu", Credentials: credentialsInFiles, Offline: true, ObjectStoreURL: "http://127.0.0.1:1",
		ObjectStoreAdminAccess: "root", ObjectStoreAdminSecret: "root-secret"}
	file := map[string]string{}
	if err := ensureStoreHolding(ctx, s, deploys, file); err != nil {
		t.Fatalf("offline: %v", err)
	}
	if file["DEPLOYS_OBJECT_STORE_SECRET_KEY"] == "" || file["DEPLOYS_OBJECT_STORE_ACCESS_KEY"] != "tori-deploys" || file["DEPLOYS_OBJECT_STORE_BUCKET"] != "tori-artifacts" {
		t.Fatalf("offline file = %v", keys(file))
	}
	s.Offline, s.Credentials = false, credentialsInEnv
	t.Setenv("DEPLOYS_OBJECT_STORE_SECRET_KEY", "")
	err := ensureStoreHolding(ctx, s, deploys, map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "DEPLOYS_OBJECT_STORE_SECRET_KEY must be set") {
		t.Fatalf("in-cluster without the secret: %v", err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
