package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// With an ACME CA and ZONE_TLS_WILDCARD=dns01 the zone orders the previews' wildcard
// (*.<PREVIEWS_DOMAIN>) by DNS-01 beside the apps' one: two orders in all, every preview
// host served with it, none ordered on its own.
func TestEdgeOrdersThePreviewsWildcardByDNS01(t *testing.T) {
	plain, secure := testinfra.FreeAddr(t), testinfra.FreeAddr(t)
	_, hp, _ := net.SplitHostPort(plain)
	_, tp, _ := net.SplitHostPort(secure)
	httpPort, _ := strconv.Atoi(hp)
	tlsPort, _ := strconv.Atoi(tp)
	pebble := testinfra.StartPebbleValidating(t, 24*time.Hour, httpPort, tlsPort)
	dir := t.TempDir()
	hook, log := filepath.Join(dir, "dns01-hook"), filepath.Join(dir, "hook.log")
	if err := os.WriteFile(hook, []byte(fakeDNSHook), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZONE_TLS_DNS01_CHALLTEST", pebble.ChalltestURL())
	t.Setenv("ZONE_TLS_DNS01_LOG", log)

	cfg := acmeConfig(pebble, time.Minute)
	cfg.EdgeAddr, cfg.TLSAddr = plain, secure
	cfg.Wildcard, cfg.DNS01Hook = "dns01", hook
	cfg.PreviewsDomain = "preview.apps.test"
	e := startTLSEdge(t, cfg)
	e.table.Replace([]edge.Route{{AppID: "app1", Slug: e.slug, DeployID: "d1", Kind: revision.KindStatic}}, nil)
	e.table.ReplacePreviews([]edge.Preview{
		{ID: "abc123", AppID: "app1", Slug: e.slug, DeployID: "d1", Kind: revision.KindStatic},
		{ID: "def456", AppID: "app1", Slug: e.slug, DeployID: "d1", Kind: revision.KindStatic},
	})
	hosts := []string{e.slug + "-abc123.preview.apps.test", e.slug + "-def456.preview.apps.test"}
	var last error
	testinfra.Eventually(t, 60*time.Second, "the previews' wildcard served", func() bool {
		leaf, err := e.handshake(hosts[0], pebble.Roots)
		last = err
		return err == nil && slices.Contains(leaf.DNSNames, "*.preview.apps.test")
	})
	if last != nil {
		t.Fatal(last)
	}
	for _, h := range append(hosts[1:], e.host) {
		testinfra.Eventually(t, 60*time.Second, h+" served by a wildcard", func() bool {
			leaf, err := e.handshake(h, pebble.Roots)
			return err == nil && leaf.VerifyHostname(h) == nil && strings.HasPrefix(leaf.DNSNames[0], "*.")
		})
	}
	if n := pebble.Orders(); n != 2 {
		t.Fatalf("%d orders, want the two wildcards'", n)
	}
	calls, _ := os.ReadFile(log)
	if !strings.Contains(string(calls), "present _acme-challenge.preview.apps.test. ") {
		t.Fatalf("hook calls:\n%s", calls)
	}
}
