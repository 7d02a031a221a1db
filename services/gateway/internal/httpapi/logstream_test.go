package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tori.dev/services/gateway/internal/httpapi"
	"tori.dev/services/gateway/internal/logstreams"
)

// eventService plays the logs service's stream: an event every 100 ms until the request
// ends, or n events then its own final event when n > 0.
func eventService(t *testing.T, n int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/logs/stream") {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; n == 0 || i <= n; i++ {
			fmt.Fprintf(w, "id: c%d\ndata: {\"message\":\"line %d\"}\n\n", i, i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		fmt.Fprint(w, "event: close\ndata: {\"reason\":\"idle_timeout\",\"message\":\"m\"}\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// openStream returns a channel of the stream's lines, each with when it was read.
func openStream(t *testing.T, h *harness, token string) (int, <-chan string, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url+"/api/apps/web/logs/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return res.StatusCode, lines, cancel
}

// A stream outlives the gateway's write timeout, and its events pass as they come.
func TestLogStreamIsExemptFromTheWriteTimeoutAndUnbuffered(t *testing.T) {
	h := start(t, options{
		override: map[string]string{"logs": eventService(t, 15).URL},
		timeouts: httpapi.Timeouts{Write: 300 * time.Millisecond},
		streams:  logstreams.New(5, nil, nil),
	})
	status, lines, _ := openStream(t, h, "tok_alice")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	opened := time.Now()
	var got []string
	var firstAt time.Duration
	for l := range lines {
		if l == "data: {\"message\":\"line 1\"}" {
			firstAt = time.Since(opened)
		}
		got = append(got, l)
	}
	all := strings.TrimSpace(strings.Join(got, "\n"))
	if !strings.Contains(all, "line 15") || !strings.HasSuffix(all, `data: {"reason":"idle_timeout","message":"m"}`) {
		t.Fatalf("the stream was cut (1.5 s against a 300 ms write timeout):\n%s", all)
	}
	if firstAt > time.Second {
		t.Fatalf("the first event arrived after %s: held back until more came", firstAt)
	}
}

// Logout through the gateway ends the token's streams with token_revoked; another token's
// stream goes on; the account's cap counts open streams and frees a place when one ends.
func TestLogStreamEndsOnRevocationAndIsCapped(t *testing.T) {
	streams := logstreams.New(2, nil, nil)
	h := start(t, options{override: map[string]string{"logs": eventService(t, 0).URL}, streams: streams})
	_, session, _ := openStream(t, h, "tok_alice")
	_, apiToken, _ := openStream(t, h, "svc_alice") // same account, another token
	if status, _, _ := openStream(t, h, "tok_alice"); status != http.StatusTooManyRequests {
		t.Fatalf("third stream of the account: %d", status)
	}
	if r := h.do("POST", "/api/auth/logout", "tok_alice", nil); r.Status/100 != 2 {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	var last []string
	deadline := time.After(5 * time.Second)
	for done := false; !done; {
		select {
		case l, ok := <-session:
			if !ok {
				done = true
				break
			}
			last = append(last, l)
		case <-deadline:
			t.Fatal("the revoked token's stream did not end")
		}
	}
	tail := strings.Join(last[max(0, len(last)-3):], "\n")
	if !strings.HasPrefix(tail, "event: close\ndata: {\"reason\":\"token_revoked\"") {
		t.Fatalf("the stream ended with %q, want the final token_revoked event", tail)
	}
	// The other token's stream still flows.
	select {
	case l := <-apiToken:
		if l == "" || strings.HasPrefix(l, "event: close") {
			for l == "" {
				l = <-apiToken
			}
		}
		if strings.HasPrefix(l, "event: close") {
			t.Fatalf("another token's stream ended: %q", l)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("another token's stream stopped")
	}
	if streams.Count("acct-a") != 1 {
		t.Fatalf("open streams of the account: %d, want 1 once the revoked one ended", streams.Count("acct-a"))
	}
}
