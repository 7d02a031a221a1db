package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// StreamStall is how long an open log stream may send nothing before it is given up and
// reopened: the service sends a heartbeat every 15 s, so three missed ones mean the
// connection is dead even if no error said so.
const StreamStall = 45 * time.Second

// OpenLogStream opens GET /api/apps/{slug}/logs/stream and returns its body, to be read as
// Server-Sent Events; lastEventID resumes after that event. An answer other than 200 is an
// *Error as every call's; a body that stops moving for StreamStall fails its read.
func (c *Client) OpenLogStream(ctx context.Context, slug string, q url.Values, lastEventID string) (io.ReadCloser, error) {
	address := strings.TrimRight(c.BaseURL, "/") + Fill(OpLogStream.Path, []string{slug})
	target := address
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	wctx, watch, done := watchProgress(ctx, StreamStall)
	hr, err := http.NewRequestWithContext(wctx, http.MethodGet, target, nil)
	if err != nil {
		done()
		return nil, err
	}
	hr.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		hr.Header.Set("Last-Event-ID", lastEventID)
	}
	if c.UserAgent != "" {
		hr.Header.Set("User-Agent", c.UserAgent)
	}
	if c.Token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(hr)
	if err != nil {
		done()
		return nil, c.transportError(ctx, wctx, hr, err, StreamStall)
	}
	if resp.StatusCode != http.StatusOK {
		defer done()
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		apiErr := &Error{Status: resp.StatusCode, Raw: raw, Header: resp.Header,
			Method: http.MethodGet, URL: address, Op: OpLogStream, Params: []string{slug}}
		json.Unmarshal(raw, &apiErr.Body)
		return nil, apiErr
	}
	return &streamBody{r: watch.reader(resp.Body), body: resp.Body, done: done}, nil
}

type streamBody struct {
	r    io.Reader
	body io.Closer
	done func()
}

func (b *streamBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *streamBody) Close() error {
	err := b.body.Close()
	b.done()
	return err
}
