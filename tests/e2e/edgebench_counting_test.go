package e2e

import (
	"fmt"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// runCountingRounds is bench-edge's measure of what counting each request costs the edge
// (issue 40: the customer's request metrics, target under 3 % of throughput): the zone
// agent restarted with EDGE_METRICS=off and =on in turn, the first to go swapping each
// round, wrk on every case against the edge alone. It prints each run, each case's medians
// and `counting cost: X% of throughput` (how much lower the median throughput is with
// counting on; negative: within noise, on was faster). The agent is left counting.
func runCountingRounds(b *testing.B, s *harness.Stack, dir, transport string, rounds int, duration string, cases []edgeCase,
	site *benchSite, staticHost, appHost string) {
	b.Helper()
	settings := [2]string{"off", "on"}
	runs := map[string][2][]wrkResult{}
	for round := 1; round <= rounds; round++ {
		order := []int{0, 1}
		if round%2 == 0 {
			order = []int{1, 0}
		}
		for _, i := range order {
			s.Stop("zoneagent")
			s.Env["EDGE_METRICS"] = settings[i]
			s.Restart("zoneagent")
			t := edgeTarget{"Tori", "http", s.Env["EDGE_ADDR"], nil}
			t.warm(b, site, staticHost, appHost) // the cache is emptied at start; the app wakes
			for _, c := range cases {
				r := runWrk(b, dir, t.addr, t.scheme, c.host, c.paths, duration)
				fmt.Printf("%-5s %-20s round %d  EDGE_METRICS=%-3s %s\n", transport, c.what, round, settings[i], r)
				got := runs[c.what]
				got[i] = append(got[i], r)
				runs[c.what] = got
			}
		}
	}
	for _, c := range cases {
		off, on := median(runs[c.what][0]), median(runs[c.what][1])
		fmt.Printf("%-5s %-20s median    EDGE_METRICS=off %s\n%-5s %-20s median    EDGE_METRICS=on  %s\n",
			transport, c.what, off, transport, c.what, on)
		fmt.Printf("counting cost: %.1f%% of throughput (%s over %s; p99 %.2f ms on, %.2f ms off)\n",
			(off.rps-on.rps)/off.rps*100, c.what, transport, on.p99, off.p99)
	}
	s.Stop("zoneagent")
	s.Env["EDGE_METRICS"] = "on"
	s.Restart("zoneagent")
}
