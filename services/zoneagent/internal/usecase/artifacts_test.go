package usecase_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/store"
)

// storeURLs stands in for deploys.rpc.artifact_url (which needs the deploys service): it
// hands out a URL of the revision's artifact on a server of the test's own, as deploys hands
// out a presigned URL of the object store. The agent fetches it with the real Fetcher.
type storeURLs struct {
	st   *store.Store
	base string
}

func (u storeURLs) ArtifactURL(ctx context.Context, _, deployID string) (string, error) {
	r, err := u.st.Revision(ctx, deployID)
	if err != nil {
		return "", err
	}
	return u.base + "/" + r.ArtifactKey, nil
}

// artifactsFrom serves dir over HTTP for the test and fetches revisions' artifacts from it.
func artifactsFrom(t *testing.T, st *store.Store, dir string) artifact.Fetcher {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return artifact.Fetcher{URLs: storeURLs{st: st, base: srv.URL}}
}
