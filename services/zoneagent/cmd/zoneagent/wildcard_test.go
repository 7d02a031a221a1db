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

// fakeDNSHook is a DNS-01 hook as an operator writes one, with pebble-challtestsrv standing in
// for the DNS provider's API: it publishes and removes the TXT record Pebble then looks up. It
// logs each call, and reaches the server only through ZONE_TLS_DNS01_* (the agent's other
// variables are not passed on).
const fakeDNSHook = `#!/bin/sh
set -eu
echo "$1 $2 $3 secret=${ZONE_TLS_STORAGE_KEY:-none}" >> "$ZONE_TLS_DNS01_LOG"
case "$1" in
present) body="{\"host\":\"$2\",\"value\":\"$3\"}"; path=set-txt ;;
cleanup) body="{\"host\":\"$2\"}"; path=clear-txt ;;
*) exit 2 ;;
esac
curl -fsS -X POST -d "$body" "$ZONE_TLS_DNS01_CHALLTEST/$path"
`

// With ZONE_TLS_WILDCARD=dns01 the zone orders one certificate for *.<APPS_DOMAIN> through
// certmagic's ACME issuer, the operator's hook publishing the DNS-01 record that Pebble
// validates for real; every app's hostname is then served with it, and no app's hostname is
// ordered on its own.
func TestEdgeWildcardByDNS01Hook(t *testing.T) {
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
	t.Setenv("ZONE_TLS_STORAGE_KEY", testTLSKey) // as the agent has it: the hook must not see it

	cfg := acmeConfig(pebble, time.Minute)
	cfg.EdgeAddr, cfg.TLSAddr = plain, secure
	cfg.Wildcard, cfg.DNS01Hook = "dns01", hook
	e := startTLSEdge(t, cfg)
	e.table.Replace([]edge.Route{
		{AppID: "app1", Slug: e.slug, DeployID: "d1", Kind: revision.KindStatic},
		{AppID: "app2", Slug: "other", DeployID: "d2", Kind: revision.KindStatic},
	}, nil)

	var last error
	testinfra.Eventually(t, 60*time.Second, "the wildcard certificate served for "+e.host, func() bool {
		leaf, err := e.handshake(e.host, pebble.Roots)
		last = err
		return err == nil && slices.Contains(leaf.DNSNames, "*.apps.test")
	})
	if last != nil {
		t.Fatal(last)
	}
	leaf, err := e.handshake("other.apps.test", pebble.Roots)
	if err != nil || !slices.Contains(leaf.DNSNames, "*.apps.test") || leaf.VerifyHostname("other.apps.test") != nil {
		t.Fatalf("other.apps.test: %v %v", err, leaf)
	}
	if n := pebble.Orders(); n != 1 {
		t.Fatalf("%d orders, want the wildcard's one", n)
	}
	calls, _ := os.ReadFile(log)
	text := string(calls)
	if !strings.Contains(text, "present _acme-challenge.apps.test. ") || !strings.Contains(text, "cleanup _acme-challenge.apps.test. ") {
		t.Fatalf("hook calls:\n%s", text)
	}
	if strings.Contains(text, testTLSKey) || !strings.Contains(text, "secret=none") {
		t.Fatalf("the hook saw the agent's storage key:\n%s", text)
	}
}
