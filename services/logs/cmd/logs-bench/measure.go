package main

import (
	"context"
	"fmt"
	"time"
)

// readPaths are the three ways to the same page: the headline through the gateway, the logs
// service's own route (what the service adds), and the store's statement as plain SQL.
type readPaths struct {
	gateway *pageReader
	service *pageReader
	sql     func() (time.Duration, error)
	// The floor (floor.go): the page's bytes from a bare server, directly and through a
	// bare TCP relay.
	bare, relayed *pageReader
}

// measure reads the page samples times per path after a warm-up of a tenth as many,
// alternating the paths so each sees the same cache state, and prints percentiles and ratios.
func measure(ctx context.Context, p readPaths, samples int) error {
	if err := p.gateway.check(ctx); err != nil {
		return err
	}
	warmup := samples / 10
	var viaGateway, viaService, viaSQL, viaBare, viaRelay []time.Duration
	for i := range warmup + samples {
		dg, _, err := p.gateway.once(ctx)
		if err != nil {
			return err
		}
		ds, _, err := p.service.once(ctx)
		if err != nil {
			return err
		}
		dq, err := p.sql()
		if err != nil {
			return err
		}
		db, _, err := p.bare.once(ctx)
		if err != nil {
			return err
		}
		dr, _, err := p.relayed.once(ctx)
		if err != nil {
			return err
		}
		if i >= warmup { // the warm-up fills caches, the token cache and connection pools
			viaGateway = append(viaGateway, dg)
			viaService = append(viaService, ds)
			viaSQL = append(viaSQL, dq)
			viaBare = append(viaBare, db)
			viaRelay = append(viaRelay, dr)
		}
	}
	fmt.Printf("  %d samples per path after %d warm-up, sequential, one account (the gateway allows it 600 reads a minute); 429 answers waited out: %d\n",
		samples, warmup, p.gateway.waited)
	g50, g99 := percentile(viaGateway, 50), percentile(viaGateway, 99)
	h50, h99 := percentile(viaService, 50), percentile(viaService, 99)
	s50, s99 := percentile(viaSQL, 50), percentile(viaSQL, 99)
	row := func(label, p50, p99 string) { fmt.Printf("  %-50s p50 %-9s p99 %s\n", label, p50, p99) }
	row("through the gateway (bearer token)", ms(g50), ms(g99))
	row("plain SQL, same statement, bounds and table", ms(s50), ms(s99))
	row("ratio gateway / SQL", ratio(g50, s50), ratio(g99, s99))
	row("logs service's route alone (signed, no gateway)", ms(h50), ms(h99))
	row("ratio service alone / SQL", ratio(h50, s50), ratio(h99, s99))
	// What any answer after the statement pays at least: the same bytes over HTTP with no
	// work, and a hop that does nothing but copy them.
	b50, b99 := percentile(viaBare, 50), percentile(viaBare, 99)
	r50, r99 := percentile(viaRelay, 50), percentile(viaRelay, 99)
	row("floor: the page's bytes from a bare server", ms(b50), ms(b99))
	row("floor: the same through a bare TCP relay", ms(r50), ms(r99))
	row("floor ratio (SQL + bytes via the relay) / SQL",
		ratio(s50+r50, s50), ratio(s99+r99, s99))
	return nil
}

func ratio(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(b)) }
