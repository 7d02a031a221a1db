package harness

import (
	"testing"

	"tori.dev/pkg/testinfra"
)

// zoneObjectStore is what bin/bootstrap writes to zone's agent file about the object store:
// the stack's S3 server (started on first use, one per stack) and the zone's own account and
// bucket there (its dumps live in it; docs/conventions.md).
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
