package httpapi_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"
)

// BenchmarkAuthenticatedRead is the gateway's whole path for a cached token: trace, CORS,
// authentication, the per-account window (in memory here), signing and forwarding.
func BenchmarkAuthenticatedRead(b *testing.B) {
	benchmarkPath(b, "/api/account", true, options{cache: true})
}

// BenchmarkAccountFromTheCopy is GET /api/account answered from the gateway's copy of the
// account: the path of every read but an account's first.
func BenchmarkAccountFromTheCopy(b *testing.B) {
	benchmarkPath(b, "/api/account", true, options{cache: true, accounts: true})
}

// BenchmarkHealthz is the same front without authentication, limits or an upstream.
func BenchmarkHealthz(b *testing.B) {
	benchmarkPath(b, "/healthz", false, options{cache: true})
}

func benchmarkPath(b *testing.B, path string, authenticated bool, o options) {
	h := start(b, o)
	req, _ := http.NewRequest("GET", h.url+path, nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if authenticated && i%500 == 0 {
			// A fresh account every 500 reads stays under the 600 a minute: this measures
			// the cost of the limits, not their effect.
			req.Header.Set("Authorization", "Bearer svc_bench_"+strconv.Itoa(i/500))
		}
		resp, err := h.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
