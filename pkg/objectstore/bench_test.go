package objectstore_test

import (
	"context"
	"io"
	"testing"

	"tori.dev/pkg/testinfra"
)

// BenchmarkPutStreaming is an upload of unknown length, as deploys streams one: 64 MiB
// through the real server on this machine (MB/s is the figure; B/op is what one upload
// allocates, part buffer included unless the pool had one).
func BenchmarkPutStreaming(b *testing.B) {
	srv := testinfra.StartObjectStore(b)
	s := holder(b, srv, "bench", "bench-bucket")
	const size = 64 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Put(context.Background(), "bench/put", io.LimitReader(zeroReader{}, size), -1, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetFirstByte is the time to a stored object's first byte: what a cold edge cache
// adds to a request.
func BenchmarkGetFirstByte(b *testing.B) {
	srv := testinfra.StartObjectStore(b)
	s := holder(b, srv, "bench", "bench-bucket")
	ctx := context.Background()
	if _, err := s.Put(ctx, "bench/site/index.html", io.LimitReader(zeroReader{}, 64<<10), 64<<10, "text/html"); err != nil {
		b.Fatal(err)
	}
	one := make([]byte, 1)
	for b.Loop() {
		rc, _, err := s.Get(ctx, "bench/site/index.html", nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(rc, one); err != nil {
			b.Fatal(err)
		}
		rc.Close()
	}
}
