package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"tori.dev/tests/e2e/harness"
)

// scaleClient calls the gateway from any goroutine: unlike harness.Stack.Do it returns
// errors instead of failing the test (FailNow is for the test's own goroutine), and keeps
// enough idle connections for the seeding workers, so a measured request never pays for a
// new connection.
type scaleClient struct {
	base string
	http *http.Client
	// signIns are clients from other loopback addresses (127.0.1.x): the sign-in routes are
	// limited per client address, and 2,000 customers do not share one.
	signIns []*http.Client
	pace    *pacer
}

const signInAddresses = 100

func newScaleClient(base string) *scaleClient {
	c := &scaleClient{base: base, http: clientFrom(nil, 64), pace: &pacer{sent: map[string][]time.Time{}}}
	for i := range signInAddresses {
		c.signIns = append(c.signIns, clientFrom(net.IPv4(127, 0, 1, byte(1+i)), 2))
	}
	return c
}

// clientFrom is an HTTP client whose connections leave from addr (any when nil).
func clientFrom(addr net.IP, idle int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = idle, idle
	if addr != nil {
		d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: addr}}
		tr.DialContext = d.DialContext
	}
	return &http.Client{Timeout: 60 * time.Second, Transport: tr}
}

// The contract's per-account windows (services/gateway/internal/ratelimit: 600 reads and 120
// writes a minute for each operation), with a margin.
const (
	paceReads  = 540
	paceWrites = 108
)

// pacer keeps the bench's requests within each account's window for an operation: before a
// request it waits (untimed) until fewer than the limit were sent in the last minute.
type pacer struct {
	mu   sync.Mutex
	sent map[string][]time.Time
}

func (p *pacer) wait(token, op string, limit int) {
	key := token + " " + op
	for {
		p.mu.Lock()
		now := time.Now()
		s := p.sent[key]
		for len(s) > 0 && now.Sub(s[0]) > time.Minute+time.Second {
			s = s[1:]
		}
		if len(s) < limit {
			p.sent[key] = append(s, now)
			p.mu.Unlock()
			return
		}
		p.sent[key] = s
		until := s[0].Add(time.Minute + time.Second)
		p.mu.Unlock()
		time.Sleep(time.Until(until))
	}
}

// errStatus is an answer other than the one the caller expected.
var errStatus = errors.New("unexpected status")

// call sends one request; body is JSON unless it is a []byte (sent with contentType). It
// returns the body when the status is want.
func (c *scaleClient) call(ctx context.Context, method, path, token string, body any, contentType string, want int) ([]byte, error) {
	return c.callWith(ctx, c.http, method, path, token, body, contentType, want)
}

func (c *scaleClient) callWith(ctx context.Context, hc *http.Client, method, path, token string, body any, contentType string, want int) ([]byte, error) {
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		rd, contentType = bytes.NewReader(raw), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return out, fmt.Errorf("%w: %s %s: %d %s", errStatus, method, path, resp.StatusCode, truncate(string(out), 300))
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var scaleLinkCode = regexp.MustCompile(`/auth/verify\?token=([A-Za-z0-9_\-]+)`)

// signIn is harness.Stack.SignIn for a worker goroutine: a magic link by mail, then its code
// for a session token. The account it creates is as real as any customer's.
func (c *scaleClient) signIn(ctx context.Context, s *harness.Stack, email string, i int) (string, error) {
	from := c.signIns[i%len(c.signIns)]
	before := s.SMTP.Count(email)
	if _, err := c.callWith(ctx, from, http.MethodPost, "/api/auth/magic-link", "", map[string]string{"email": email}, "", http.StatusAccepted); err != nil {
		return "", err
	}
	m, ok := s.SMTP.WaitFor(email, before, 30*time.Second)
	if !ok {
		return "", fmt.Errorf("no mail reached %s", email)
	}
	match := scaleLinkCode.FindStringSubmatch(strings.ReplaceAll(m.Data, "=\r\n", ""))
	if match == nil {
		return "", fmt.Errorf("no verify link in the mail to %s", email)
	}
	raw, err := c.callWith(ctx, from, http.MethodPost, "/api/auth/magic-link/verify", "", map[string]string{"token": match[1]}, "", http.StatusOK)
	if err != nil {
		return "", err
	}
	var v struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Token == "" {
		return "", fmt.Errorf("verify %s: no token in %s", email, truncate(string(raw), 200))
	}
	return v.Token, nil
}

// inParallel runs job(i) for i in [0, n) on workers goroutines and returns the first error.
func inParallel(ctx context.Context, n, workers int, job func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := job(ctx, i); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
