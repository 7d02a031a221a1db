package drains

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// DeliveryTimeout bounds one batch's delivery: past it the batch failed.
const DeliveryTimeout = 10 * time.Second

// Deliverer sends batches to receivers through the guard.
type Deliverer struct {
	Guard Guard
	// Timeout bounds a batch; 0 is DeliveryTimeout.
	Timeout time.Duration
	// Clients keeps one HTTPS client per drain, so its connection is reused from batch to
	// batch (a TLS handshake a batch was most of a busy drain's CPU); nil makes a client per
	// delivery (the test route's one line).
	Clients *Clients
}

// Clients are HTTPS clients by drain.
type Clients struct {
	mu sync.Mutex
	m  map[string]*http.Client
}

// NewClients is an empty set.
func NewClients() *Clients { return &Clients{m: map[string]*http.Client{}} }

// Drop closes the drain's idle connection and forgets its client.
func (c *Clients) Drop(drainID string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	cl := c.m[drainID]
	delete(c.m, drainID)
	c.mu.Unlock()
	if cl != nil {
		cl.CloseIdleConnections()
	}
}

func (dv Deliverer) client(d Drain, t Target) *http.Client {
	if dv.Clients == nil {
		return dv.newClient(t, true)
	}
	dv.Clients.mu.Lock()
	defer dv.Clients.mu.Unlock()
	cl := dv.Clients.m[d.ID]
	if cl == nil {
		cl = dv.newClient(t, false)
		dv.Clients.m[d.ID] = cl
	}
	return cl
}

// newClient is a client whose every new connection goes through the guard's dialer (the
// address check) and TLS configuration. A kept connection stays with the address it was
// checked at; a new one is checked again.
func (dv Deliverer) newClient(t Target, once bool) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         dv.Guard.dialer(t).DialContext,
			TLSClientConfig:     dv.Guard.tlsConfig(t),
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: 10 * time.Second,
			DisableKeepAlives:   once,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     30 * time.Second,
		},
		// A redirect is a failure: the drain's address is the one checked and shown.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Result is what one delivery came to.
type Result struct {
	Status int // the HTTP status (HTTPS drains); 0 when none came
}

// Deliver sends entries (in order) of the app slug to d. nil only when the receiver took them
// all: a 2xx for HTTPS, every frame written for syslog.
func (dv Deliverer) Deliver(ctx context.Context, d Drain, slug string, entries []logs.Entry) (Result, error) {
	t, err := ParseURL(d.URL)
	if err != nil {
		return Result{}, err
	}
	timeout := dv.Timeout
	if timeout <= 0 {
		timeout = DeliveryTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if t.Kind == KindSyslog {
		return Result{}, dv.syslog(ctx, t, slug, entries)
	}
	return dv.https(ctx, t, d, slug, entries)
}

func (dv Deliverer) https(ctx context.Context, t Target, d Drain, slug string, entries []logs.Entry) (Result, error) {
	body := NDJSON(slug, entries)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL.String(), bytes.NewReader(body))
	if err != nil {
		return Result{}, err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set(SignatureHeader, Sign(d.Secret, body))
	req.Header.Set("Tori-Drain-Id", d.ID)
	req.Header.Set("User-Agent", "tori-drain/1")
	resp, err := dv.client(d, t).Do(req)
	if err != nil {
		return Result{}, describe(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Result{Status: resp.StatusCode}, fmt.Errorf("the receiver answered %d", resp.StatusCode)
	}
	return Result{Status: resp.StatusCode}, nil
}

func (dv Deliverer) syslog(ctx context.Context, t Target, slug string, entries []logs.Entry) error {
	conn, err := dv.Guard.DialTLS(ctx, t)
	if err != nil {
		return describe(err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	var b bytes.Buffer
	for _, e := range entries {
		b.Write(Syslog(slug, e))
	}
	if _, err := conn.Write(b.Bytes()); err != nil {
		return describe(err)
	}
	// A clean close (TLS close_notify) tells the receiver the frames are complete.
	if err := conn.CloseWrite(); err != nil {
		return describe(err)
	}
	return nil
}

// describe is a delivery error as shown in lastError: short, no secret (URLs carry none the
// transport would print beyond the host).
func describe(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL may hold a token in its query: never repeated
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.New("timed out")
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return fmt.Errorf("%s: %v", oe.Op, oe.Err)
	}
	return err
}
