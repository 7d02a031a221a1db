package harness

import (
	"testing"

	"tori.dev/pkg/testinfra"
)

// ArtifactsBucket is deploys' bucket, where every uploaded artifact lives.
const ArtifactsBucket = "tori-artifacts"

// deploysObjectStore is what bin/bootstrap writes to deploys' file about the object store:
// the stack's S3 server (started on first use, one per stack) and deploys' own account and
// the artifacts bucket there (docs/conventions.md, "Artifacts"). A zone gets no part of it.
func (s *Stack) deploysObjectStore(t testing.TB) map[string]string {
	t.Helper()
	if s.ObjectStore.URL == "" {
		s.ObjectStore = testinfra.StartObjectStore(t)
	}
	return s.ObjectStore.Holding(t, "DEPLOYS", "tori-deploys", ArtifactsBucket)
}
