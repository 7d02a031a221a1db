package objectstore_test

import (
	"context"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
)

// TestStreamingPutHoldsAboutOnePart: an upload of unknown length eight parts long raises the
// heap by a few parts at most, never by the upload's size (the guarantee behind deploys'
// peak memory during a 500 MB upload).
func TestStreamingPutHoldsAboutOnePart(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	s := holder(t, srv, "mem", "mem-bucket")
	const size = 8 * objectstore.PartSize
	// A warm-up upload, so the client's one-time allocations are not counted.
	if _, err := s.Put(context.Background(), "warm", io.LimitReader(zeroReader{}, objectstore.PartSize+1), -1, ""); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	info, err := s.Put(context.Background(), "big", io.LimitReader(zeroReader{}, size), -1, "")
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != size {
		t.Fatalf("stored %d bytes, want %d", info.Size, size)
	}
	grew := int64(peak) - int64(base.HeapAlloc)
	t.Logf("heap grew by %d MiB at most during a %d MiB upload", grew>>20, size>>20)
	if grew > 4*objectstore.PartSize {
		t.Fatalf("the heap grew by %d MiB during a %d MiB upload: more than four %d MiB parts", grew>>20, size>>20, objectstore.PartSize>>20)
	}
}

type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) { clear(b); return len(b), nil }
