package main

import (
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/config"
)

func acmeConfig(p *testinfra.Pebble, renewEvery time.Duration, challenges ...string) config.EdgeProcess {
	if len(challenges) == 0 {
		challenges = []string{"http-01", "tls-alpn-01"}
	}
	return config.EdgeProcess{Edge: config.Edge{EdgeTLS: config.EdgeTLS{ACMECA: p.Directory, ACMECARoot: p.APIRootFile, RenewCheckInterval: renewEvery, ACMEChallenges: challenges}}}
}

// Each challenge type is answered by the edge itself: Pebble's validation (its DNS pointing
// every name at 127.0.0.1) reads the HTTP-01 token from the edge's plain listener, or makes
// the TLS-ALPN-01 handshake with its TLS listener, before it issues.
func TestEdgeAnswersACMEChallenges(t *testing.T) {
	for _, challenge := range []string{"http-01", "tls-alpn-01"} {
		t.Run(challenge, func(t *testing.T) {
			plain, secure := testinfra.FreeAddr(t), testinfra.FreeAddr(t)
			_, hp, _ := net.SplitHostPort(plain)
			_, tp, _ := net.SplitHostPort(secure)
			httpPort, _ := strconv.Atoi(hp)
			tlsPort, _ := strconv.Atoi(tp)
			pebble := testinfra.StartPebbleValidating(t, 24*time.Hour, httpPort, tlsPort)
			cfg := acmeConfig(pebble, time.Minute, challenge)
			cfg.EdgeAddr, cfg.TLSAddr = plain, secure
			e := startTLSEdge(t, cfg)
			e.route()
			var last error
			testinfra.Eventually(t, 30*time.Second, "a certificate validated by "+challenge, func() bool {
				leaf, err := e.handshake(e.host, pebble.Roots)
				last = err
				return err == nil && leaf.VerifyHostname(e.host) == nil
			})
			if last != nil {
				t.Fatal(last)
			}
		})
	}
}

// With an ACME CA, an app's hostname answers https:// with a certificate chained to the CA's
// root within 30 s of becoming servable; a name the edge does not serve gets a TLS alert and
// the CA sees no order for it.
func TestEdgeOrdersFromACMEForServedNamesOnly(t *testing.T) {
	pebble := testinfra.StartPebble(t, 24*time.Hour)
	e := startTLSEdge(t, acmeConfig(pebble, time.Minute))

	// Not servable yet: no certificate, no order.
	if _, err := e.handshake(e.host, pebble.Roots); err == nil || !strings.Contains(err.Error(), "remote error: tls:") {
		t.Fatalf("before the app is routed: %v, want a TLS alert", err)
	}
	e.route()
	servable := time.Now()
	var body string
	testinfra.Eventually(t, 30*time.Second, "https with a certificate from the ACME CA", func() bool {
		resp, err := e.client(pebble.Roots).Get(e.httpsURL(e.host, "/"))
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return resp.StatusCode == 200
	})
	t.Logf("served over https %v after becoming servable", time.Since(servable).Round(time.Millisecond))
	if body != "hello over tls" {
		t.Fatalf("body %q", body)
	}
	leaf, err := e.handshake(e.host, pebble.Roots)
	if err != nil || leaf.VerifyHostname(e.host) != nil {
		t.Fatalf("leaf: %v", err)
	}
	orders := pebble.Orders()
	if orders != 1 {
		t.Fatalf("%d orders for one name, want 1", orders)
	}
	for _, name := range []string{"evil.apps.test", "example.com", "a." + e.host} {
		if _, err := e.handshake(name, pebble.Roots); err == nil || !strings.Contains(err.Error(), "remote error: tls:") {
			t.Fatalf("%s: %v, want a TLS alert", name, err)
		}
	}
	if pebble.Orders() != orders {
		t.Fatalf("an order was placed for a name the edge does not serve (%d)", pebble.Orders())
	}
}

// With short-lived certificates, the edge renews the certificate (a third of its life left)
// while a client polls over fresh connections, with no failed request in between.
func TestEdgeRenewsWithoutAFailedRequest(t *testing.T) {
	pebble := testinfra.StartPebble(t, 45*time.Second)
	e := startTLSEdge(t, acmeConfig(pebble, time.Second))
	e.route()
	first, err := func() (string, error) {
		var serial string
		var last error
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			leaf, err := e.handshake(e.host, pebble.Roots)
			if err == nil {
				serial = leaf.SerialNumber.String()
				return serial, nil
			}
			last = err
			time.Sleep(200 * time.Millisecond)
		}
		return "", last
	}()
	if err != nil {
		t.Fatalf("first certificate: %v", err)
	}
	client := e.client(pebble.Roots)
	var failures atomic.Int32
	renewed := false
	deadline := time.Now().Add(60 * time.Second)
	requests := 0
	for time.Now().Before(deadline) && !renewed {
		requests++
		resp, err := client.Get(e.httpsURL(e.host, "/"))
		if err != nil {
			failures.Add(1)
			t.Errorf("request %d failed: %v", requests, err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			failures.Add(1)
			t.Errorf("request %d: %d", requests, resp.StatusCode)
		}
		if resp.TLS != nil && resp.TLS.PeerCertificates[0].SerialNumber.String() != first {
			renewed = true
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !renewed {
		t.Fatalf("the certificate was not renewed within 60s (%d requests)", requests)
	}
	if failures.Load() != 0 {
		t.Fatalf("%d of %d requests failed through the renewal", failures.Load(), requests)
	}
	t.Logf("renewed after %d requests, none failed; %d orders", requests, pebble.Orders())
}
