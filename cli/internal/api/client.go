// Package api is the command line's client of the public Tori API.
package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Raw is an answer's body as the API sent it, for --json.
type Raw = json.RawMessage

// Client speaks to one API base URL with one token.
type Client struct {
	BaseURL   string
	Token     string
	HTTP      *http.Client
	UserAgent string
	// Notice receives what the client tells the user on its own (the 429 wait).
	Notice io.Writer
	// Sleep waits; tests replace it.
	Sleep func(context.Context, time.Duration) error
	// Timeout bounds each wait for the other side (DefaultTimeout when zero): an upload or
	// an answer that makes no progress for this long fails. HTTP's own steps are bounded by
	// the client NewHTTPClient makes.
	Timeout time.Duration
}

// Upload is a multipart body that can be made again for a retry.
type Upload struct {
	ContentType string
	Length      int64
	Open        func() (io.ReadCloser, error)
}

// Error is an API answer outside 2xx, in the API's words, with the request it answered.
type Error struct {
	Status int
	Body   ErrorBody
	Raw    []byte
	Header http.Header
	// Method and URL are the request's; Op and Params which operation on which objects.
	Method, URL string
	Op          *Operation
	Params      []string
}

// Error is the API's words and the request, e.g. `not found (GET https://…/api/apps/x)`.
func (e *Error) Error() string {
	return e.Words() + " (" + e.Method + " " + e.URL + ")"
}

// Words is what the API said: error, and message when it says more.
func (e *Error) Words() string {
	word := e.Body.Error
	if word == "" {
		word = strings.TrimSpace(string(e.Raw))
	}
	if word == "" {
		word = http.StatusText(e.Status)
	}
	if e.Body.Message != "" && e.Body.Message != word {
		return word + ": " + e.Body.Message
	}
	return word
}

// Word is the machine-readable condition: code when set, else error.
func (e *Error) Word() string {
	if e.Body.Code != "" {
		return e.Body.Code
	}
	return e.Body.Error
}

// RetryAfter is how long the API asked to wait, at least a second.
func (e *Error) RetryAfter() time.Duration {
	secs := 0
	if n, err := strconv.Atoi(strings.TrimSpace(e.Header.Get("Retry-After"))); err == nil {
		secs = n
	} else if e.Body.RetryAfterSeconds != nil {
		secs = *e.Body.RetryAfterSeconds
	} else if e.Body.RetryAfter != nil {
		secs = *e.Body.RetryAfter
	}
	if secs < 1 {
		secs = 1
	}
	return time.Duration(secs) * time.Second
}

type req struct {
	op      *Operation
	params  []string
	query   url.Values
	body    any
	upload  *Upload
	noRetry bool
}

// NewUUID is a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Fill puts params, escaped, into path's {placeholders} in order.
func Fill(path string, params []string) string {
	var b strings.Builder
	i := 0
	for {
		open := strings.IndexByte(path, '{')
		if open < 0 {
			b.WriteString(path)
			return b.String()
		}
		end := strings.IndexByte(path[open:], '}')
		b.WriteString(path[:open])
		if i < len(params) {
			b.WriteString(url.PathEscape(params[i]))
		}
		i++
		path = path[open+end+1:]
	}
}

func call[T any](ctx context.Context, c *Client, r req) (T, Raw, error) {
	var out T
	raw, err := c.send(ctx, r)
	if err != nil {
		return out, raw, err
	}
	if r.op.Response != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return out, raw, fmt.Errorf("%s %s: unexpected answer: %v", r.op.Method, r.op.Path, err)
		}
	}
	return out, raw, nil
}

func (c *Client) send(ctx context.Context, r req) (Raw, error) {
	address := strings.TrimRight(c.BaseURL, "/") + Fill(r.op.Path, r.params)
	target := address
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	// One key per logical operation: its retry after a 429 carries the same one.
	key := ""
	if r.op.Method == http.MethodPost {
		key = NewUUID()
	}
	var jsonBody []byte
	if r.body != nil {
		var err error
		if jsonBody, err = json.Marshal(r.body); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		hr, err := http.NewRequestWithContext(ctx, r.op.Method, target, nil)
		if err != nil {
			return nil, err
		}
		switch {
		case r.upload != nil:
			body, err := r.upload.Open()
			if err != nil {
				return nil, err
			}
			hr.Body = body
			hr.ContentLength = r.upload.Length
			hr.Header.Set("Content-Type", r.upload.ContentType)
		case jsonBody != nil:
			hr.Body = io.NopCloser(bytes.NewReader(jsonBody))
			hr.ContentLength = int64(len(jsonBody))
			hr.Header.Set("Content-Type", "application/json")
		}
		hr.Header.Set("Accept", "application/json")
		if key != "" {
			hr.Header.Set("Idempotency-Key", key)
		}
		if c.UserAgent != "" {
			hr.Header.Set("User-Agent", c.UserAgent)
		}
		if c.Token != "" && !r.op.Public {
			hr.Header.Set("Authorization", "Bearer "+c.Token)
		}
		hc := c.HTTP
		if hc == nil {
			hc = defaultHTTP
		}
		raw, resp, err := c.exchange(ctx, hc, hr)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return raw, nil
		}
		apiErr := &Error{Status: resp.StatusCode, Raw: raw, Header: resp.Header,
			Method: r.op.Method, URL: address, Op: r.op, Params: r.params}
		json.Unmarshal(raw, &apiErr.Body)
		if resp.StatusCode == http.StatusTooManyRequests && attempt == 0 && !r.noRetry {
			wait := apiErr.RetryAfter()
			if c.Notice != nil {
				fmt.Fprintf(c.Notice, "Rate limited (%s); waiting %s before retrying once.\n", apiErr.Word(), wait)
			}
			if err := c.sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		return raw, apiErr
	}
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// exchange sends hr and reads the whole answer, failing with the request named when the
// other side does not answer or stops moving for the timeout.
func (c *Client) exchange(ctx context.Context, hc *http.Client, hr *http.Request) (Raw, *http.Response, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	wctx, watch, done := watchProgress(ctx, timeout)
	defer done()
	hr = hr.WithContext(wctx)
	if hr.Body != nil {
		hr.Body = watch.reader(hr.Body)
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, nil, c.transportError(ctx, wctx, hr, err, timeout)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(watch.reader(resp.Body))
	if err != nil {
		return nil, nil, c.transportError(ctx, wctx, hr, err, timeout)
	}
	return raw, resp, nil
}

// TransportError is a request that got no complete answer: nothing listening, no answer in
// time, or a transfer that stalled.
type TransportError struct {
	Method, URL string
	// TimedOut: the other side did not answer or move for Timeout.
	TimedOut bool
	Timeout  time.Duration
	Err      error
}

func (e *TransportError) Error() string {
	req := "(" + e.Method + " " + e.URL + ")"
	if e.TimedOut {
		return fmt.Sprintf("no answer from the Tori API in %s %s: check that it is up and that TORI_API_URL is right", e.Timeout, req)
	}
	return fmt.Sprintf("cannot reach the Tori API %s: %v: check your network and TORI_API_URL", req, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

func (c *Client) transportError(ctx, wctx context.Context, hr *http.Request, err error, timeout time.Duration) error {
	if ctx.Err() != nil {
		return ctx.Err() // the caller gave up (Ctrl-C): not the API's doing
	}
	inner := err
	if ue, ok := err.(*url.Error); ok {
		inner = ue.Err
	}
	te := &TransportError{Method: hr.Method, URL: redactURL(hr.URL), Timeout: timeout, Err: inner}
	var ne net.Error
	if errors.Is(context.Cause(wctx), errStalled) || (errors.As(err, &ne) && ne.Timeout()) {
		te.TimedOut = true
	}
	return te
}

// redactURL is the request's address without any user information or query, for messages.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	return c.String()
}
