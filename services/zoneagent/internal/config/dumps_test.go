package config

import (
	"context"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

// A zone hosting managed databases keeps their dumps in its own bucket: without the bucket's
// settings it refuses to start; the download URL's lifetime and public address are checked.
func TestManagedDatabasesNeedTheZonesBucket(t *testing.T) {
	managed := map[string]string{"ZONE_POSTGRES_ADMIN_URL": "postgres://prov:pw@127.0.0.1:5433/postgres"}
	bucket := map[string]string{
		"OBJECT_STORE_URL": "http://127.0.0.1:7070", "ZONEAGENT_OBJECT_STORE_ACCESS_KEY": "tori-zone-local",
		"ZONEAGENT_OBJECT_STORE_SECRET_KEY": "s3cr3t", "ZONEAGENT_OBJECT_STORE_BUCKET": "tori-zone-local",
	}
	with := func(maps ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range maps {
			for k, v := range m {
				out[k] = v
			}
		}
		return withCredentials(out)
	}
	var ok Config
	if err := pkgconfig.LoadMap(context.Background(), &ok, with(managed, bucket)); err != nil {
		t.Fatalf("managed databases with the zone's bucket: %v", err)
	}
	if ok.DumpURLLifetime.Minutes() != 5 || ok.DumpPresignConfig().URL != "http://127.0.0.1:7070" {
		t.Fatalf("defaults: %v, %s", ok.DumpURLLifetime, ok.DumpPresignConfig().URL)
	}
	var public Config
	if err := pkgconfig.LoadMap(context.Background(), &public, with(managed, bucket, map[string]string{"OBJECT_STORE_PUBLIC_URL": "https://store.example.com"})); err != nil {
		t.Fatal(err)
	}
	if public.DumpPresignConfig().URL != "https://store.example.com" || public.ObjectStoreConfig().URL != "http://127.0.0.1:7070" {
		t.Fatalf("the public address is for URLs alone: %s, %s", public.DumpPresignConfig().URL, public.ObjectStoreConfig().URL)
	}
	noBucket := with(managed)
	for k := range bucket {
		delete(noBucket, k)
	}
	for _, env := range []map[string]string{
		noBucket,
		with(managed, bucket, map[string]string{"ZONE_DUMP_URL_TTL": "2h"}),
		with(managed, bucket, map[string]string{"ZONE_DUMP_URL_TTL": "0s"}),
		with(managed, bucket, map[string]string{"OBJECT_STORE_PUBLIC_URL": "store.example.com"}),
	} {
		var c Config
		if err := pkgconfig.LoadMap(context.Background(), &c, env); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
}
