package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/edgecount"
)

// The edge's TLS cost, side by side with plain HTTP (README "Performance"): full handshakes
// per second, and a request on a kept-alive connection over TLS against plain HTTP.
// cd services/zoneagent && go test -run '^$' -bench BenchmarkEdge -benchtime 3s ./cmd/zoneagent/

func benchEdge(b *testing.B) (*tlsEdge, *x509.CertPool) {
	b.Helper()
	e := startTLSEdge(b, config.EdgeProcess{Edge: config.Edge{EdgeTLS: config.EdgeTLS{}}})
	e.route()
	pemRoot, err := os.ReadFile(filepath.Join(e.cfg.DataDir, "tls", "root.pem"))
	if err != nil {
		b.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemRoot)
	if _, err := e.handshake(e.host, roots); err != nil { // the certificate, once
		b.Fatal(err)
	}
	return e, roots
}

// BenchmarkEdgeTLSHandshake: one full TLS 1.3 handshake (ECDSA P-256, no resumption) per op.
func BenchmarkEdgeTLSHandshake(b *testing.B) {
	e, roots := benchEdge(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.handshake(e.host, roots); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
}

func benchGet(b *testing.B, c *http.Client, url, host string) {
	b.Helper()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Host = host
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// BenchmarkEdgeRequestPlain: a static file over plain HTTP/1.1, kept-alive (TLS off).
func BenchmarkEdgeRequestPlain(b *testing.B) {
	e := startTLSEdge(b, config.EdgeProcess{Edge: config.Edge{EdgeTLS: config.EdgeTLS{TLSAddr: config.TLSOff}}})
	e.route()
	benchGet(b, &http.Client{}, "http://"+e.cfg.EdgeAddr+"/", e.host)
}

// BenchmarkEdgeRequestTLS: the same file over HTTPS (HTTP/1.1), kept-alive.
func BenchmarkEdgeRequestTLS(b *testing.B) {
	e, roots := benchEdge(b)
	c := e.client(roots)
	c.Transport.(*http.Transport).DisableKeepAlives = false
	c.Transport.(*http.Transport).ForceAttemptHTTP2 = false
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: roots}
	benchGet(b, c, e.httpsURL(e.host, "/"), e.host)
}

// BenchmarkEdgeCounting: what counting the customer's requests costs the edge (issue 40), a
// static file over plain HTTP/1.1 from 32 kept-alive clients, with counting off and on (the
// real counter) in three rounds on one edge, the first to go swapping each round (round 0
// warms up).
// cd services/zoneagent && go test -run '^$' -bench BenchmarkEdgeCounting -benchtime 3s ./cmd/zoneagent/
func BenchmarkEdgeCounting(b *testing.B) {
	e := startTLSEdge(b, config.EdgeProcess{Edge: config.Edge{EdgeTLS: config.EdgeTLS{TLSAddr: config.TLSOff}}})
	e.route()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	url := "http://" + e.cfg.EdgeAddr + "/"
	counter := &edgecount.Counter{}
	// A round 0 of both, not to be read: the first run pays for the site's first fetch into
	// the cache and the clients' first connections.
	for round := 0; round <= 3; round++ {
		order := []bool{false, true}
		if round%2 == 0 {
			order = []bool{true, false}
		}
		for _, on := range order {
			name := fmt.Sprintf("round%d/%s", round, map[bool]string{false: "off", true: "on"}[on])
			b.Run(name, func(b *testing.B) {
				// Between runs no request is in flight: the handler reads Counts per request.
				e.edge.Counts = nil
				if on {
					e.edge.Counts = counter
				}
				b.SetParallelism(16)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						req, _ := http.NewRequest(http.MethodGet, url, nil)
						req.Host = e.host
						resp, err := c.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Errorf("status %d", resp.StatusCode)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
		}
	}
}
