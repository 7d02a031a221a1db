package testinfra

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"tori.dev/pkg/objectstore/versityadmin"
)

var notBucketSafe = regexp.MustCompile(`[^a-z0-9-]+`)

// ZoneObjectStoreEnv makes a zone's account and bucket on s, as bin/bootstrap does
// (tori-zone-<zone>, owned by the account of the same name, of the least role), and returns
// the variables bootstrap writes to the zone agent's file. Idempotent per zone.
func (s ObjectStore) ZoneObjectStoreEnv(t testing.TB, zone string) map[string]string {
	t.Helper()
	name := "tori-zone-" + strings.Trim(notBucketSafe.ReplaceAllString(strings.ToLower(zone), "-"), "-")
	secret := "zone-secret-" + randomHex(16)
	admin := versityadmin.Client{URL: s.URL, AccessKey: s.AccessKey, SecretKey: s.SecretKey}
	ctx := context.Background()
	if err := admin.EnsureUser(ctx, name, secret); err != nil {
		t.Fatal(err)
	}
	if err := admin.EnsureBucket(ctx, name, name); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"OBJECT_STORE_URL":                  s.URL,
		"ZONEAGENT_OBJECT_STORE_ACCESS_KEY": name,
		"ZONEAGENT_OBJECT_STORE_SECRET_KEY": secret,
		"ZONEAGENT_OBJECT_STORE_BUCKET":     name,
	}
}
