package artifact

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type urls struct {
	url string
	err error
	got []string
}

func (u *urls) ArtifactURL(_ context.Context, appID, deployID string) (string, error) {
	u.got = append(u.got, appID+"/"+deployID)
	return u.url, u.err
}

// The fetcher asks for a URL of this deploy's artifact when it opens it and streams the
// object; a refusal, a store's error or an unreachable store fail the fetch, and no error
// shows the URL, which reads the artifact without credentials while it lives.
func TestFetcherAsksForAURLAtFetchTimeAndNeverShowsIt(t *testing.T) {
	const secretQuery = "X-Amz-Signature=c0ffee"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bucket/ok":
			io.WriteString(w, "tarball bytes")
		case "/bucket/moved":
			http.Redirect(w, r, "/bucket/ok", http.StatusFound)
		default:
			http.Error(w, "<Error><Code>AccessDenied</Code></Error>", http.StatusForbidden)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	issuer := &urls{url: srv.URL + "/bucket/ok?" + secretQuery}
	rc, err := Fetcher{URLs: issuer}.Open(ctx, "app", "deploy")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "tarball bytes" || len(issuer.got) != 1 || issuer.got[0] != "app/deploy" {
		t.Fatalf("read %q after asking for %v", b, issuer.got)
	}

	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for name, u := range map[string]*urls{
		"refused by deploys":  {err: errors.New("bus: remote: forbidden: this zone does not host that deploy")},
		"denied by the store": {url: srv.URL + "/bucket/expired?" + secretQuery},
		"a redirect":          {url: srv.URL + "/bucket/moved?" + secretQuery},
		"store unreachable":   {url: dead.URL + "/bucket/ok?" + secretQuery},
		"not an http URL":     {url: "file:///etc/passwd?" + secretQuery},
	} {
		rc, err := Fetcher{URLs: u}.Open(ctx, "app", "deploy")
		if err == nil {
			rc.Close()
			t.Errorf("%s: the fetch succeeded", name)
			continue
		}
		if strings.Contains(err.Error(), secretQuery) || (u.url != "" && strings.Contains(err.Error(), u.url)) {
			t.Errorf("%s: the error shows the URL: %v", name, err)
		}
	}
}
