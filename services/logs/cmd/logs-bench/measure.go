package main

import (
	"context"
	"fmt"
	"time"
)

// readPaths are the ways to the same page: the headline through the gateway, the logs
// service's own route (what the service adds), the store's statement as plain SQL, and the
// floor (floor.go): the page's bytes from a bare server, directly and through a bare relay.
type readPaths struct {
	gateway, service, bare, relayed *pageReader
	sql                             func() (time.Duration, error)
}

// measure reads the page samples times per path after a warm-up of a tenth as many,
// alternating the paths so each sees the same cache state, and prints percentiles and ratios.
func measure(ctx context.Context, p readPaths, samples int) error {
	if err := p.gateway.check(ctx); err != nil {
		return err
	}
	fromReader := func(r *pageReader) func() (time.Duration, error) {
		return func() (time.Duration, error) { d, _, err := r.once(ctx); return d, err }
	}
	// In this order in every round.
	reads := []func() (time.Duration, error){fromReader(p.gateway), fromReader(p.service), p.sql, fromReader(p.bare), fromReader(p.relayed)}
	taken := make([][]time.Duration, len(reads))
	warmup := samples / 10
	for i := range warmup + samples {
		for j, read := range reads {
			d, err := read()
			if err != nil {
				return err
			}
			if i >= warmup { // the warm-up fills caches, the token cache and connection pools
				taken[j] = append(taken[j], d)
			}
		}
	}
	fmt.Printf("  %d samples per path after %d warm-up, sequential, one account (the gateway allows it 600 reads a minute); 429 answers waited out: %d\n",
		samples, warmup, p.gateway.waited)
	at50 := func(j int) time.Duration { return percentile(taken[j], 50) }
	at99 := func(j int) time.Duration { return percentile(taken[j], 99) }
	const gateway, service, sql, bare, relayed = 0, 1, 2, 3, 4
	row := func(label, p50, p99 string) { fmt.Printf("  %-50s p50 %-9s p99 %s\n", label, p50, p99) }
	row("through the gateway (bearer token)", ms(at50(gateway)), ms(at99(gateway)))
	row("plain SQL, same statement, bounds and table", ms(at50(sql)), ms(at99(sql)))
	row("ratio gateway / SQL", ratio(at50(gateway), at50(sql)), ratio(at99(gateway), at99(sql)))
	row("logs service's route alone (signed, no gateway)", ms(at50(service)), ms(at99(service)))
	row("ratio service alone / SQL", ratio(at50(service), at50(sql)), ratio(at99(service), at99(sql)))
	// What any answer after the statement pays at least: the same bytes over HTTP with no
	// work, and a hop that does nothing but copy them.
	row("floor: the page's bytes from a bare server", ms(at50(bare)), ms(at99(bare)))
	row("floor: the same through a bare TCP relay", ms(at50(relayed)), ms(at99(relayed)))
	row("floor ratio (SQL + bytes via the relay) / SQL",
		ratio(at50(sql)+at50(relayed), at50(sql)), ratio(at99(sql)+at99(relayed), at99(sql)))
	// What the gateway and the service add above that floor: the figure #27 judged the page's
	// encoder by (services/logs/README.md).
	row("ratio gateway / floor (SQL + bytes via the relay)",
		ratio(at50(gateway), at50(sql)+at50(relayed)), ratio(at99(gateway), at99(sql)+at99(relayed)))
	return nil
}

func ratio(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(b)) }
