package edge

import (
	"fmt"
	"testing"

	"tori.dev/services/zoneagent/internal/revision"
)

// tableOf is a table of n static apps (app<i>, slug s<i>) and one hostname per hundred.
func tableOf(n int) *Table {
	routes := make([]Route, n)
	hosts := map[string]string{}
	for i := range routes {
		routes[i] = Route{AppID: fmt.Sprintf("app%d", i), Slug: fmt.Sprintf("s%d", i), DeployID: "d1", Kind: revision.KindStatic}
		if i%100 == 0 {
			hosts[fmt.Sprintf("www.h%d.test", i)] = routes[i].AppID
		}
	}
	t := NewTable()
	t.Replace(routes, hosts)
	return t
}

// BenchmarkTableLookup is the edge's read path: a slug's route, at 1k and 10k apps. It must
// not grow with the table.
// cd services/zoneagent && go test -run '^$' -bench BenchmarkTable ./internal/edge/
func BenchmarkTableLookup(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		t := tableOf(n)
		slug := fmt.Sprintf("s%d", n/2)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, ok := t.Lookup(slug); !ok {
					b.Fatal("no route")
				}
			}
		})
	}
}

// BenchmarkTableSet is one deploy's write to the table, at 1k and 10k apps: it must not
// copy the whole table.
func BenchmarkTableSet(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		t := tableOf(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				t.Set(Route{AppID: "app7", Slug: "s7", DeployID: fmt.Sprint(i), Kind: revision.KindStatic})
			}
		})
	}
}

// BenchmarkTableRouteByApp is the runtime's lookup on every wake the edge asks for (an
// app's own route by its id): it must not grow with the table.
func BenchmarkTableRouteByApp(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		t := tableOf(n)
		app := fmt.Sprintf("app%d", n/2)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, ok := t.Route(app); !ok {
					b.Fatal("no route")
				}
			}
		})
	}
}
