// Package clientip decides which address a request comes from, for the per-address buckets.
package clientip

import (
	"net/netip"
	"strings"
)

// Resolver knows which peers are proxies allowed to name the client.
type Resolver struct {
	trusted []netip.Prefix
}

// New makes a resolver trusting the given prefixes. With none, the client is always the peer.
func New(trusted []netip.Prefix) *Resolver {
	return &Resolver{trusted: trusted}
}

// Resolve returns the client address of a request from peer carrying the given
// X-Forwarded-For header values, in the order they arrived.
//
// The TCP peer is the client unless it is a trusted proxy. Then X-Forwarded-For is read from
// the right, the end our own proxies appended to, skipping trusted proxies: the first address
// that is not one is the client. Anything left of it was written by the client itself and is
// worthless. A malformed entry stops the walk at the last trusted hop, since nothing beyond it
// can be believed; a chain of trusted proxies only yields its left-most address.
func (r *Resolver) Resolve(peer netip.Addr, xff []string) netip.Addr {
	peer = peer.Unmap()
	if !r.isTrusted(peer) {
		return peer
	}
	client := peer
	for i := len(xff) - 1; i >= 0; i-- {
		entries := strings.Split(xff[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			e := strings.TrimSpace(entries[j])
			if e == "" {
				continue
			}
			a, ok := parse(e)
			if !ok {
				return client
			}
			client = a
			if !r.isTrusted(a) {
				return a
			}
		}
	}
	return client
}

// Bucket is the name a client address is counted under by the per-address limits: the
// address itself for IPv4, its /64 for IPv6. A single subscriber or host is usually given a
// whole /64, so counting per /128 would hand it 2^64 fresh buckets.
func Bucket(a netip.Addr) string {
	if a = a.Unmap(); a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}

func (r *Resolver) isTrusted(a netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parse accepts an address as proxies write it: bare, with a port, or bracketed IPv6.
func parse(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}
