package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Source opens the artifact of one deploy of an app, as a stream.
type Source interface {
	Open(ctx context.Context, appID, deployID string) (io.ReadCloser, error)
}

// URLIssuer asks the deploys service for a short-lived URL that reads a deploy's artifact
// (deploys.rpc.artifact_url); it answers only the zone hosting that deploy.
type URLIssuer interface {
	ArtifactURL(ctx context.Context, appID, deployID string) (string, error)
}

// Fetcher opens artifacts from the object store through presigned URLs. The zone holds no
// credentials to the artifacts' bucket and reads no folder deploys writes: it asks for a URL
// when it starts a fetch (a command may wait longer than any URL lives) and streams the
// object into the unpacking, so an artifact never rests whole in memory.
type Fetcher struct {
	URLs URLIssuer
	// Client fetches the URL; nil uses one that follows no redirect and waits at most a
	// minute for the store's first byte (the body itself may take as long as it takes).
	Client *http.Client
}

var defaultClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		ResponseHeaderTimeout: time.Minute,
		TLSHandshakeTimeout:   10 * time.Second,
		IdleConnTimeout:       90 * time.Second,
	},
	// A presigned URL names the object itself; a redirect is not the store answering.
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Open fetches the artifact of appID's deploy deployID. Errors never show the URL: it reads
// the artifact without credentials while it lives, and a failure's message reaches the
// customer and the logs.
func (f Fetcher) Open(ctx context.Context, appID, deployID string) (io.ReadCloser, error) {
	raw, err := f.URLs.ArtifactURL(ctx, appID, deployID)
	if err != nil {
		return nil, fmt.Errorf("no URL for the artifact: %w", err)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errors.New("the artifact URL is not an http(s) URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, errors.New("the artifact URL makes no request")
	}
	client := f.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return nil, fmt.Errorf("fetch the artifact: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return nil, fmt.Errorf("fetch the artifact: the object store answered %s", resp.Status)
	}
	return resp.Body, nil
}
