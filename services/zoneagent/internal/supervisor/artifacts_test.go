package supervisor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"tori.dev/services/zoneagent/internal/artifact"
)

// artifactKey is where the rig puts a deploy's artifact in its folder.
func artifactKey(appID, deployID string) string {
	return "artifacts/" + appID + "/" + deployID + ".tar.gz"
}

// folderURLs stands in for deploys.rpc.artifact_url (which needs the deploys service): it
// hands out a URL of the deploy's artifact on a server of the test's own, as deploys hands
// out a presigned URL of the object store.
type folderURLs struct{ base string }

func (u folderURLs) ArtifactURL(_ context.Context, appID, deployID string) (string, error) {
	return u.base + "/" + artifactKey(appID, deployID), nil
}

// artifactsFrom serves dir over HTTP for the test; the runner fetches from it with the real
// Fetcher.
func artifactsFrom(t *testing.T, dir string) artifact.Fetcher {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return artifact.Fetcher{URLs: folderURLs{base: srv.URL}}
}
