package objectstore

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// A burst of concurrent reads leaves its connections open for the next burst: a Store keeps
// as many idle connections to its one host as it runs requests at once (minio's default of 16
// closed the rest, and a zone edge filling its cache for many sites dialled anew each time).
func TestConcurrentReadsReuseTheirConnections(t *testing.T) {
	var dials atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"abc"`)
		w.Header().Set("Last-Modified", "Sun, 29 Nov 2026 12:00:00 GMT")
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "hello")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	st, err := New(Config{URL: srv.URL, AccessKey: "k", SecretKey: "secret-0123456789", Bucket: "tori-test"})
	if err != nil {
		t.Fatal(err)
	}
	const concurrent = 48
	burst := func() {
		var wg sync.WaitGroup
		var ready sync.WaitGroup
		ready.Add(concurrent)
		start := make(chan struct{})
		for i := 0; i < concurrent; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ready.Done()
				<-start
				r, _, err := st.Get(context.Background(), "sites/a/d/manifest.json", nil)
				if err != nil {
					t.Error(err)
					return
				}
				if b, err := io.ReadAll(r); err != nil || string(b) != "hello" {
					t.Errorf("read %q, %v", b, err)
				}
				r.Close()
			}()
		}
		ready.Wait()
		close(start)
		wg.Wait()
	}
	burst()
	first := dials.Load()
	burst()
	if again := dials.Load() - first; again > concurrent/4 {
		t.Fatalf("the second burst of %d reads dialled %d new connections (the first %d): idle ones were closed", concurrent, again, first)
	}
}
