package harness

import (
	"maps"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
)

// zoneObjectStore starts the stack's S3 server on first use and returns the zone agent's
// account and bucket on it, as bin/bootstrap writes them to the zone's file.
func (s *Stack) zoneObjectStore() map[string]string {
	s.t.Helper()
	if s.objectStore == nil {
		srv := testinfra.StartObjectStore(s.t)
		s.objectStore = &srv
	}
	zone := s.Env["ZONE_ID"]
	if zone == "" {
		zone = "local" // the zone agent's default
	}
	return s.objectStore.ZoneObjectStoreEnv(s.t, zone)
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

// addZoneObjectStore puts the zone's object-store variables among its credentials.
func (s *Stack) addZoneObjectStore(creds map[string]string) {
	maps.Copy(creds, s.zoneObjectStore())
}
