package edge

import (
	"net"
	"net/http"
	"time"

	"tori.dev/pkg/connlimit"
)

// Timeouts of the edge's client connections. Apps serve browsers and API clients of their own,
// so the body and answer bounds are generous (an app may take uploads or stream an answer for
// a while), yet finite: no connection is held forever. Headers must arrive promptly.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 5 * time.Minute
	WriteTimeout      = 10 * time.Minute
	IdleTimeout       = 2 * time.Minute
)

// DefaultMaxConnsPerIP is EDGE_MAX_CONNS_PER_IP's default.
const DefaultMaxConnsPerIP = 256

// NewServer is the edge's HTTP server with its timeouts.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// LimitPerIP bounds the edge's concurrent connections per client address (EDGE_MAX_CONNS_PER_IP).
func LimitPerIP(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		max = DefaultMaxConnsPerIP
	}
	return connlimit.PerIP(ln, max)
}
