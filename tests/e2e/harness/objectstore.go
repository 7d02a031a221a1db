package harness

import "tori.dev/pkg/testinfra"

// The stack's S3 server (docs/objectstore.md): every stack runs the real one, and deploys and
// the zone agent get the accounts and buckets bin/bootstrap makes for them, each only its own.

// ArtifactsBucket is deploys' bucket, where every uploaded artifact lives.
const ArtifactsBucket = "tori-artifacts"

// startObjectStore runs the stack's S3 server until the test ends.
func (s *Stack) startObjectStore() {
	s.t.Helper()
	s.ObjectStore = testinfra.StartObjectStore(s.t)
}

// objectStoreCredentials are what bin/bootstrap writes for service name: deploys' account
// and the artifacts bucket, the zone's account and its own bucket; nothing for the others.
func (s *Stack) objectStoreCredentials(name string) map[string]string {
	s.t.Helper()
	switch name {
	case "deploys":
		return s.ObjectStore.Holding(s.t, "DEPLOYS", "tori-deploys", ArtifactsBucket)
	case "zoneagent":
		zone := s.Env["ZONE_ID"]
		if zone == "" {
			zone = "local"
		}
		return s.ObjectStore.Holding(s.t, "ZONEAGENT", "tori-zone-"+zone, "tori-zone-"+zone)
	}
	return nil
}
