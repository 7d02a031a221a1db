package main

import (
	"context"
	"net"
	"time"

	"tori.dev/services/apps/internal/usecase"
)

// newResolver returns the system resolver, or one that asks only the DNS server at addr
// (host:port) when addr is set: DNS_RESOLVER lets operators pick an uncached upstream and
// lets tests run their own server.
func newResolver(addr string) usecase.Resolver {
	if addr == "" {
		return net.DefaultResolver
	}
	d := net.Dialer{Timeout: 3 * time.Second}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}
}
