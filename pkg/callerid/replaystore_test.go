package callerid

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/httperror"
)

// A service whose replay store is full answers 503 service_unavailable, never 401 (the
// gateway and clients must not take an overloaded service for an unknown token), and serves
// the next valid request once the store has drained.
func TestAFullReplayStoreAnswers503NotUnauthorized(t *testing.T) {
	key := []byte("test-signing-key-0123456789")
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: httperror.Handler(slog.Default())})
	app.Get("/api/things", middleware(key, NewNonces(4), true, httperror.Unauthorized, clock).handle, func(c *fiber.Ctx) error {
		return c.SendString(From(c).AccountID)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	target := ln.Addr().String()

	send := func() (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+target+"/api/things", nil)
		Sign(key, req.Header.Set, Caller{AccountID: "acct-1", UserID: "u", TokenKind: KindSession, TokenID: "t"}, "GET", target, "/api/things", clock())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for i := range 4 {
		if code, body := send(); code != 200 {
			t.Fatalf("request %d under the bound: %d %s", i, code, body)
		}
	}
	for range 20 {
		code, body := send()
		if code != http.StatusServiceUnavailable {
			t.Fatalf("full store: %d %s, want 503", code, body)
		}
		var e struct{ Error, Code string }
		if json.Unmarshal([]byte(body), &e) != nil || e.Error != "service_unavailable" || e.Code != "service_unavailable" {
			t.Fatalf("full store body: %s", body)
		}
	}
	// The oldest signatures go stale and take their nonces with them.
	mu.Lock()
	now = now.Add(MaxSkew + time.Second)
	mu.Unlock()
	if code, body := send(); code != 200 || body != "acct-1" {
		t.Fatalf("after draining: %d %s", code, body)
	}
}
