package harness

import (
	"testing"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
)

// zoneObjectStore is what bin/bootstrap writes to zone's agent file about the object store:
// the stack's S3 server (started on first use, one per stack) and the zone's own account and
// bucket there (its sites and dumps live in it; docs/conventions.md).
func (s *Stack) zoneObjectStore(t testing.TB, zone string) map[string]string {
	t.Helper()
	if s.ObjectStore.URL == "" {
		s.ObjectStore = testinfra.StartObjectStore(t)
	}
	if zone == "" {
		zone = "local"
	}
	return s.ObjectStore.ZoneObjectStoreEnv(t, zone)
}

// ZoneSites is the zone's bucket seen with the zone's own credentials (a test looks at the
// site objects a deploy published or a delete reclaimed).
func (s *Stack) ZoneSites() *objectstore.Store {
	s.t.Helper()
	c := s.creds["zoneagent"]
	b, err := objectstore.New(objectstore.Config{URL: c["OBJECT_STORE_URL"], AccessKey: c["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"], SecretKey: c["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: c["ZONEAGENT_OBJECT_STORE_BUCKET"]})
	if err != nil {
		s.t.Fatalf("harness: the zone's bucket: %v", err)
	}
	return b
}
