// Package proxy forwards a request to the service that owns it, streaming both bodies.
package proxy

import (
	"net"
	"net/http"
	"time"
)

// NewTransport is the one connection pool to every upstream. Keep-alive connections are
// reused, with enough idle ones per service that a burst does not dial afresh.
func NewTransport() *http.Transport {
	return &http.Transport{
		// Internal traffic never goes through an environment-configured proxy.
		Proxy: nil,
		DialContext: dialHeld(&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}),
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		// Bodies pass through as the service encoded them; decoding would cost CPU and
		// change what the client receives.
		DisableCompression: true,
		// Starts once the request is written, so it bounds a service's thinking time without
		// limiting how long an upload takes.
		ResponseHeaderTimeout: 2 * time.Minute,
		WriteBufferSize:       32 << 10,
		ReadBufferSize:        32 << 10,
	}
}
