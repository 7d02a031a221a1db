package main

import (
	"net"
	"testing"

	"tori.dev/services/zoneagent/internal/config"
)

// Unset health addresses become free loopback ports of their own; a named one is kept.
func TestChildHealthAddrsAreSettled(t *testing.T) {
	cfg := &config.Config{}
	if err := settleChildHealthAddrs(cfg); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{cfg.EdgeHealthAddr, cfg.DatabasesHealthAddr} {
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host != "127.0.0.1" || port == "0" {
			t.Fatalf("settled address %q", addr)
		}
	}
	if cfg.EdgeHealthAddr == cfg.DatabasesHealthAddr {
		t.Fatalf("both processes got %s", cfg.EdgeHealthAddr)
	}
	cfg = &config.Config{}
	cfg.EdgeHealthAddr = "127.0.0.1:8108"
	if err := settleChildHealthAddrs(cfg); err != nil || cfg.EdgeHealthAddr != "127.0.0.1:8108" {
		t.Fatalf("a named address was changed to %q (%v)", cfg.EdgeHealthAddr, err)
	}
}
