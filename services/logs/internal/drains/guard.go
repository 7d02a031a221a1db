package drains

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"tori.dev/pkg/netguard"
)

// Guard holds drains to public addresses: when created (every address the host resolves to)
// and at every connection (the address the socket connects to, through netguard's dialer
// Control), so neither a later DNS answer nor a redirect reaches a private one. The one
// exception is the test receiver (LOGS_DRAIN_TEST_HOST, test-only): that host:port may be
// anything, and its certificate must chain to LOGS_DRAIN_TEST_CA alone.
type Guard struct {
	// TestHost is the host:port the tests' receiver listens on; "" for none.
	TestHost string
	// TestCA is the only root the test receiver's certificate may chain to.
	TestCA *x509.CertPool
	// Resolver looks hosts up; nil is net.DefaultResolver.
	Resolver *net.Resolver
	// DialTimeout bounds a connection; 0 is 10 s.
	DialTimeout time.Duration
}

// isTest reports whether t is the test receiver.
func (g Guard) isTest(t Target) bool {
	return g.TestHost != "" && g.TestCA != nil && strings.EqualFold(t.Addr(), g.TestHost)
}

// Check resolves t's host and refuses it (ErrAddressForbidden) when any address is not
// public. A name that does not resolve is refused as invalid (the caller's typo, most likely).
func (g Guard) Check(ctx context.Context, t Target) error {
	if g.isTest(t) {
		return nil
	}
	addrs, err := g.resolve(ctx, t.Host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := netguard.Check(a); err != nil {
			return fmt.Errorf("%w: %s resolves to %s (%v)", ErrAddressForbidden, t.Host, a, err)
		}
	}
	return nil
}

// ErrUnresolvable is a host with no address.
var ErrUnresolvable = errors.New("drains: the drain's host does not resolve")

func (g Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnresolvable, host)
	}
	return addrs, nil
}

// dialer is the connection maker for t: netguard's checking Control for every target but the
// test receiver.
func (g Guard) dialer(t Target) *net.Dialer {
	timeout := g.DialTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if g.isTest(t) {
		return &net.Dialer{Timeout: timeout}
	}
	d := netguard.Dialer(nil)
	d.Timeout = timeout
	return d
}

// tlsConfig is the TLS configuration for t: the system roots, or for the test receiver its CA
// alone.
func (g Guard) tlsConfig(t Target) *tls.Config {
	c := &tls.Config{ServerName: t.Host, MinVersion: tls.VersionTLS12}
	if g.isTest(t) {
		c.RootCAs = g.TestCA
	}
	return c
}

// DialTLS connects to t over TLS through the guard.
func (g Guard) DialTLS(ctx context.Context, t Target) (*tls.Conn, error) {
	d := tls.Dialer{NetDialer: g.dialer(t), Config: g.tlsConfig(t)}
	c, err := d.DialContext(ctx, "tcp", t.Addr())
	if err != nil {
		return nil, err
	}
	return c.(*tls.Conn), nil
}
