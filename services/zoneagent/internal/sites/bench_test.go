package sites

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkFirstByte is the time to a site file's first byte at the edge: cold (an empty
// cache, so the revision's manifest and the file come from the store, as on a fresh edge or
// after a wipe) against warm (a cache hit: a local file). A 64 KiB page.
//
//	OBJECTSTORE_BIN=$(scripts/objectstore-build.sh) go test -run '^$' -bench FirstByte ./internal/sites/
func BenchmarkFirstByte(b *testing.B) {
	s := zoneStore(b)
	publish(b, s, "app1", "d1", map[string][]byte{"index.html": make([]byte, 64<<10)})
	firstByte := func(c *Cache) {
		o, err := c.Open(context.Background(), "app1", "d1", "")
		if err != nil {
			b.Fatal(err)
		}
		one := make([]byte, 1)
		if _, err := o.Read(one); err != nil {
			b.Fatal(err)
		}
		o.Close()
	}
	b.Run("cold", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			c, err := NewCache(s, fmt.Sprintf("%s/%d", b.TempDir(), i), 1<<30)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			firstByte(c)
		}
	})
	b.Run("warm", func(b *testing.B) {
		c, err := NewCache(s, b.TempDir(), 1<<30)
		if err != nil {
			b.Fatal(err)
		}
		firstByte(c)
		for b.Loop() {
			firstByte(c)
		}
	})
}
