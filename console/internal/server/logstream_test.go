package server

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The live log stream passes through the console's server as it comes (an event reaches
// the page while the API's answer is still open), with the session's bearer token and the
// page's Last-Event-ID.
func TestLogStreamIsForwardedUnbuffered(t *testing.T) {
	release := make(chan struct{})
	seen := make(chan http.Header, 1)
	api := &fakeAPI{revoked: map[string]bool{}}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/apps/web/logs/stream" {
			api.ServeHTTP(w, r)
			return
		}
		seen <- r.Header.Clone()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: c2\ndata: {\"id\":\"2\",\"message\":\"hello\"}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(upstream.Close)
	defer close(release)

	h := handlerFor(t, "memory", upstream.URL)
	cookie, _ := signIn(t, h)
	console := httptest.NewServer(h)
	t.Cleanup(console.Close)

	req, _ := http.NewRequest("GET", console.URL+"/api/apps/web/logs/stream?start=2026-11-26T00:00:00Z", nil)
	req.AddCookie(cookie)
	req.Header.Set("Last-Event-ID", "c1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	hdr := <-seen
	if hdr.Get("Authorization") != "Bearer tok_secret" || hdr.Get("Last-Event-ID") != "c1" || hdr.Get("Cookie") != "" {
		t.Fatalf("the API saw Authorization %q, Last-Event-ID %q, Cookie %q", hdr.Get("Authorization"), hdr.Get("Last-Event-ID"), hdr.Get("Cookie"))
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(res.Body)
		var lines []string
		for sc.Scan() && sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
		got <- strings.Join(lines, "\n")
	}()
	select {
	case ev := <-got:
		if ev != "id: c2\ndata: {\"id\":\"2\",\"message\":\"hello\"}" {
			t.Fatalf("event %q", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the event did not pass while the stream was open: the console's server buffers it")
	}
}
