package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"tori.dev/pkg/callerid"
)

// pageReader reads one page of the logs route at a base URL: the gateway's or the logs
// service's own. auth adds the credentials the base needs, outside the timing.
type pageReader struct {
	client *http.Client
	base   string
	path   string
	auth   func(req *http.Request, path string)
	waited int // answers 429 waited out and retried
	// body is reused from read to read, as the SQL side reuses its scan targets: growing a
	// fresh slice from 512 bytes to a 120 kB page (io.ReadAll) is the client's cost, not
	// the route's, and took as many reads from the socket as it grew.
	body bytes.Buffer
}

func newPageReader(base, path string, auth func(*http.Request, string)) *pageReader {
	return &pageReader{client: &http.Client{Timeout: 30 * time.Second}, base: base, path: path, auth: auth}
}

// bearer is what a customer sends the gateway.
func bearer(token string) func(*http.Request, string) {
	return func(req *http.Request, _ string) { req.Header.Set("Authorization", "Bearer "+token) }
}

// signed is what the gateway sends the service after checking the token; signing is the
// gateway's work, so it stays out of the service-only timing.
func signed(key, accountID string) func(*http.Request, string) {
	caller := callerid.Caller{AccountID: accountID, UserID: "bench", TokenKind: callerid.KindSession, TokenID: "bench"}
	return func(req *http.Request, path string) {
		callerid.Sign([]byte(key), req.Header.Set, caller, http.MethodGet, req.Host, path, time.Now())
	}
}

// once times one read; the body it returns is valid until the next. A 429 from the
// gateway's per-account limit (600 reads a minute per operation) is waited out and the read
// repeated; it is no sample of the route's speed.
func (r *pageReader) once(ctx context.Context) (time.Duration, []byte, error) {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+r.path, nil)
		if err != nil {
			return 0, nil, err
		}
		r.auth(req, r.path)
		start := time.Now()
		res, err := r.client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		r.body.Reset()
		_, err = r.body.ReadFrom(res.Body)
		res.Body.Close()
		d := time.Since(start)
		body := r.body.Bytes() // valid until the next read
		switch {
		case err != nil:
			return 0, nil, err
		case res.StatusCode == http.StatusTooManyRequests:
			r.waited++
			if err := sleep(ctx, retryAfter(res)); err != nil {
				return 0, nil, err
			}
		case res.StatusCode != http.StatusOK:
			return 0, nil, fmt.Errorf("GET %s%s answered %d: %s", r.base, r.path, res.StatusCode, body)
		default:
			return d, body, nil
		}
	}
}

func retryAfter(res *http.Response) time.Duration {
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

// page is the part of the route's answer the benchmark looks at.
type page struct {
	RetentionDays int               `json:"retentionDays"`
	Entries       []json.RawMessage `json:"entries"`
	Next          *string           `json:"next"`
	bytes         int
}

func (r *pageReader) page(ctx context.Context) (page, error) {
	_, body, err := r.once(ctx)
	if err != nil {
		return page{}, err
	}
	var p page
	if err := json.Unmarshal(body, &p); err != nil {
		return page{}, fmt.Errorf("GET %s%s: %w", r.base, r.path, err)
	}
	p.bytes = len(body)
	return p, nil
}

// check makes sure the gateway answers with a page of entries and says how big one is.
func (r *pageReader) check(ctx context.Context) error {
	p, err := r.page(ctx)
	if err != nil {
		return err
	}
	if len(p.Entries) == 0 {
		return fmt.Errorf("the route returned no entries")
	}
	note := ""
	if p.Next == nil {
		note = " (the hour holds less than a page: seed more for a full one)"
	}
	fmt.Printf("  one page is %d entries, %d bytes of JSON, retentionDays %d%s\n", len(p.Entries), p.bytes, p.RetentionDays, note)
	return nil
}
