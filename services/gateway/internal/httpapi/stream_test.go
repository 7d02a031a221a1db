package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

const bigBody = 200 << 20

// peakHeapGrowth runs f and reports how far the heap in use rose above where it was before.
// The whole exchange (client, gateway and upstream) runs in this process, so this bounds the
// gateway's share from above: a gateway that buffered a body would add all of it.
func peakHeapGrowth(f func()) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	baseline := ms.HeapInuse
	var peak atomic.Uint64
	peak.Store(baseline)
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		t := time.NewTimer(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				t.Reset(10 * time.Millisecond)
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return peak.Load() - baseline
}

func TestUploadStreamsThrough(t *testing.T) {
	h := start(t, options{})
	var r response
	growth := peakHeapGrowth(func() {
		req, err := http.NewRequestWithContext(context.Background(), "POST", h.url+"/api/apps/big/deploys", io.LimitReader(filler{}, bigBody))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = bigBody
		req.Header.Set("Authorization", "Bearer svc_alice")
		req.Header.Set("Content-Type", "multipart/form-data; boundary=xyz") // must not be pre-parsed
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		r = response{Status: resp.StatusCode, Body: b}
	})
	expect(t, r, 201, `{"bytes":`+strconv.Itoa(bigBody)+`}`)
	t.Logf("heap grew by %d MiB while 200 MiB went through", growth>>20)
	if growth > 50<<20 {
		t.Fatalf("heap grew by %d MiB: the body was buffered", growth>>20)
	}
}

func TestChunkedUploadStreamsThrough(t *testing.T) {
	h := start(t, options{})
	const size = 64 << 20
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, io.LimitReader(filler{}, size))
		pw.CloseWithError(err)
	}()
	var r response
	growth := peakHeapGrowth(func() {
		r = h.do("POST", "/api/apps/big/deploys", "svc_alice", pr) // unknown length: chunked
	})
	expect(t, r, 201, `{"bytes":`+strconv.Itoa(size)+`}`)
	if growth > 50<<20 {
		t.Fatalf("heap grew by %d MiB: the body was buffered", growth>>20)
	}
}

func TestDownloadStreamsThrough(t *testing.T) {
	h := start(t, options{})
	for _, known := range []string{"", "&known=1"} {
		var n int64
		var status int
		growth := peakHeapGrowth(func() {
			req, _ := http.NewRequestWithContext(context.Background(), "GET", h.url+"/api/apps/big/logs?bytes="+strconv.Itoa(bigBody)+known, nil)
			req.Header.Set("Authorization", "Bearer svc_alice")
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			status = resp.StatusCode
			n, err = io.Copy(io.Discard, resp.Body)
			if err != nil {
				t.Fatal(err)
			}
		})
		if status != 200 || n != bigBody {
			t.Fatalf("status %d, %d bytes", status, n)
		}
		t.Logf("download (length %q): heap grew by %d MiB", known, growth>>20)
		if growth > 50<<20 {
			t.Fatalf("heap grew by %d MiB: the body was buffered", growth>>20)
		}
	}
}

// A service that refuses an upload before reading it: the client gets the answer, the
// connection that still holds the unread body is closed, and the gateway carries on.
func TestEarlyAnswerToAnUpload(t *testing.T) {
	h := start(t, options{})
	req, _ := http.NewRequestWithContext(context.Background(), "POST", h.url+"/api/apps/early/deploys", io.LimitReader(filler{}, 32<<20))
	req.ContentLength = 32 << 20
	req.Header.Set("Authorization", "Bearer svc_alice")
	resp, err := h.client.Do(req)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("status %d %s", resp.StatusCode, b)
		}
	}
	// Either way (answer read, or the write cut short), the gateway still serves.
	for i := 0; i < 3; i++ {
		expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, "")
	}
}

// A refused request with a body: a small one is read away and the connection kept; a large
// one closes the connection (the client may see the answer or a reset), and the gateway
// carries on either way.
func TestRefusedRequestWithBodyKeepsServing(t *testing.T) {
	h := start(t, options{})
	for i := 0; i < 5; i++ {
		for _, small := range []io.Reader{
			bytes.NewReader(make([]byte, 20<<10)), // declared length
			io.LimitReader(filler{}, 20<<10),      // chunked
		} {
			r := h.do("POST", "/api/apps", "svc_nobody", small)
			expect(t, r, 401, "")
			if r.Header.Get("Connection") == "close" {
				t.Fatal("a small refused body should be drained, keeping the connection")
			}
		}
		req, _ := http.NewRequestWithContext(context.Background(), "POST", h.url+"/api/apps", io.LimitReader(filler{}, 2<<20))
		req.Header.Set("Authorization", "Bearer svc_nobody")
		if resp, err := h.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 401 || !resp.Close {
				t.Fatalf("large refused body: %d, close %v", resp.StatusCode, resp.Close)
			}
		}
		expect(t, h.do("POST", "/api/apps", "svc_alice", io.LimitReader(filler{}, 20<<10)), 200, "")
	}
}

func TestDeclaredBodyOverTheCapIsRefused(t *testing.T) {
	h := start(t, options{})
	req, _ := http.NewRequestWithContext(context.Background(), "POST", h.url+"/api/apps/big/deploys", io.LimitReader(filler{}, 1<<20))
	req.Header.Set("Authorization", "Bearer svc_alice")
	req.Header.Set("Content-Length", strconv.Itoa(3<<30))
	req.ContentLength = 3 << 30
	resp, err := h.client.Do(req)
	if err != nil {
		// The gateway answered and closed while the client still meant to send 3 GiB.
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	expect(t, response{Status: resp.StatusCode, Body: b}, 413, `{"error":"payload_too_large","code":"payload_too_large"}`)
	if h.up.bytesIn.Load() != 0 {
		t.Fatal("an oversized body reached a service")
	}
}

// Every body but a deploy upload is had whole before it is signed, chunked ones included:
// one within the inline limit goes through, one past it is 413 at the gateway and never
// reaches a service (a service would refuse it as unbound to its signature). The gateway
// closes the connection on the unread rest, so the client may see a reset instead of the 413.
func TestNonUploadBodiesAreBoundOrRefused(t *testing.T) {
	h := start(t, options{})
	expect(t, h.do("POST", "/api/apps", "svc_alice", io.LimitReader(filler{}, 100<<10)), 200, "")
	before := h.up.bytesIn.Load()
	for _, body := range []func() (io.Reader, int64){
		func() (io.Reader, int64) { return io.LimitReader(filler{}, 600<<10), -1 },             // chunked
		func() (io.Reader, int64) { return bytes.NewReader(make([]byte, 600<<10)), 600 << 10 }, // declared
	} {
		r, n := body()
		req, _ := http.NewRequestWithContext(context.Background(), "POST", h.url+"/api/apps", r)
		req.ContentLength = n
		req.Header.Set("Authorization", "Bearer svc_alice")
		if resp, err := h.client.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			expect(t, response{Status: resp.StatusCode, Body: b}, 413, `{"error":"payload_too_large","code":"payload_too_large"}`)
		}
		if h.up.bytesIn.Load() != before {
			t.Fatalf("an oversized body (length %d) reached a service", n)
		}
	}
	expect(t, h.do("GET", "/api/account", "svc_alice", nil), 200, "")
}
