package server

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// With CONSOLE_API_SOURCE_ADDR the API meets the console's forwarded calls (and its own, as
// the sign-in's verify) from that address, with the browser's address as X-Forwarded-For, so
// a gateway that trusts only that address sees each browser.
func TestCallsToTheAPILeaveFromTheSourceAddress(t *testing.T) {
	var mu sync.Mutex
	var peers, forwarded []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		peers, forwarded = append(peers, host), append(forwarded, r.Header.Get("X-Forwarded-For"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"plans":[]}`))
	}))
	defer api.Close()
	for _, source := range []string{"127.0.0.2", ""} {
		env := map[string]string{"BASE_URL": api.URL, "CONSOLE_API_SOURCE_ADDR": source}
		cfg, err := LoadConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		h, err := New(cfg, fstest.MapFS{"index.html": {Data: []byte("<title>app</title>")}})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/api/plans", nil)
		r.RemoteAddr = "198.51.100.7:40000"
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("forwarded: %d %s", w.Code, w.Body)
		}
		mu.Lock()
		peer, xff := peers[len(peers)-1], forwarded[len(forwarded)-1]
		mu.Unlock()
		want := source
		if want == "" {
			want = "127.0.0.1"
		}
		if peer != want {
			t.Errorf("source %q: the API saw the call from %s", source, peer)
		}
		// Whatever the browser claims is dropped: only its TCP peer is forwarded.
		if xff != "198.51.100.7" {
			t.Errorf("source %q: X-Forwarded-For %q, want the browser's address alone", source, xff)
		}
	}
	if _, err := LoadConfig(func(k string) string {
		return map[string]string{"CONSOLE_API_SOURCE_ADDR": "console"}[k]
	}); err == nil || !strings.Contains(err.Error(), "CONSOLE_API_SOURCE_ADDR") {
		t.Fatalf("a source address that is no IP: %v", err)
	}
}
