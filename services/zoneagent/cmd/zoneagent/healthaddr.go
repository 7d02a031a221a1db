package main

import (
	"errors"
	"fmt"
	"net"

	"tori.dev/services/zoneagent/internal/config"
)

// errHealthAddrUnset: a child process started by hand, not by the agent that settles its
// health address.
var errHealthAddrUnset = errors.New("the health address is unset: the zone agent that starts this process sets it")

// settleChildHealthAddrs gives the edge and the database host a free loopback port each for
// their health servers when the operator named none, so agents started side by side (tests'
// stacks, a second zone on one machine) never meet on one port. make run names 8108 and 8109.
func settleChildHealthAddrs(cfg *config.Config) error {
	for _, addr := range []*string{&cfg.EdgeHealthAddr, &cfg.DatabasesHealthAddr} {
		if *addr != "" {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("a health port for the zone's processes: %w", err)
		}
		*addr = ln.Addr().String()
		ln.Close()
	}
	return nil
}
