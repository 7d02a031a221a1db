package callerid

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/httperror"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

// replica is one process of a service: its own memory of nonces, the shared store of all.
func replica(t *testing.T, key []byte, store *SharedNonces) string {
	t.Helper()
	v := middleware(key, NewNonces(0), true, httperror.Unauthorized, time.Now)
	v.sharedStore = store
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: httperror.Handler(slog.Default())})
	app.Post("/api/things", v.handle, func(c *fiber.Ctx) error {
		return c.Status(201).SendString(string(c.Body()))
	})
	app.Get("/api/things", v.handle, func(c *fiber.Ctx) error { return c.SendString("read") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return ln.Addr().String()
}

// A signed request captured inside the cluster is refused when sent again with another body
// (the signature covers the body's digest) and when sent to another replica of the service
// (state-changing requests claim their nonce in the service's shared Postgres), while the
// request itself is served once.
func TestACapturedRequestIsRefusedWithAnotherBodyAndAtAnotherReplica(t *testing.T) {
	key := []byte("test-signing-key-0123456789")
	pool := testinfra.ServicePool(t, pgstore.Service{Schema: "callerid", Role: "tori_callerid_test", Password: "pw"}, Migrations)
	store := NewSharedNonces(pool)
	// Both replicas answer to one service name, as behind a Kubernetes Service: the signature
	// names that host, not a replica.
	a, b := replica(t, key, store), replica(t, key, store)
	const host = "things.internal:8080"
	send := func(addr string, h http.Header, method, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+"/api/things", bytes.NewReader([]byte(body)))
		req.Header = h.Clone()
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	caller := Caller{AccountID: "acct-1", UserID: "u", TokenKind: KindSession, TokenID: "t"}
	body := `{"amount":1}`
	captured := http.Header{}
	SignBody(key, captured.Set, caller, "POST", host, "/api/things", time.Now(), DigestOf([]byte(body)))

	// Another body under the captured signature, at either replica, before and after the
	// original: refused, and it does not use up the original's nonce.
	if status := send(b, captured, "POST", `{"amount":1000}`); status != 401 {
		t.Fatalf("another body at replica B: %d, want 401", status)
	}
	if status := send(a, captured, "POST", body); status != 201 {
		t.Fatalf("the original at replica A: %d, want 201", status)
	}
	if status := send(a, captured, "POST", `{"amount":1000}`); status != 401 {
		t.Fatalf("another body at replica A: %d, want 401", status)
	}
	// The same request again: refused at A (its memory) and at B (the shared store).
	if status := send(a, captured, "POST", body); status != 401 {
		t.Fatalf("replayed at replica A: %d, want 401", status)
	}
	if status := send(b, captured, "POST", body); status != 401 {
		t.Fatalf("replayed at replica B: %d, want 401", status)
	}
	// Fresh signatures are served at both.
	for _, addr := range []string{a, b} {
		fresh := http.Header{}
		SignBody(key, fresh.Set, caller, "POST", host, "/api/things", time.Now(), DigestOf([]byte(body)))
		if status := send(addr, fresh, "POST", body); status != 201 {
			t.Fatalf("fresh request: %d", status)
		}
	}
	// A read claims its nonce in the process only (replayed elsewhere it only reads again).
	read := http.Header{}
	SignBody(key, read.Set, caller, "GET", host, "/api/things", time.Now(), DigestOf(nil))
	if send(a, read, "GET", "") != 200 || send(a, read, "GET", "") != 401 {
		t.Fatal("a read replayed at the same replica was served")
	}
}

// Once the shared store cannot be asked, a state-changing request answers 503, not 401.
func TestAnUnreachableSharedStoreIsUnavailable(t *testing.T) {
	key := []byte("test-signing-key-0123456789")
	pool := testinfra.ServicePool(t, pgstore.Service{Schema: "callerid", Role: "tori_callerid_test", Password: "pw"}, Migrations)
	store := NewSharedNonces(pool)
	addr := replica(t, key, store)
	pool.Close()
	h := http.Header{}
	SignBody(key, h.Set, Caller{AccountID: "a"}, "POST", addr, "/api/things", time.Now(), DigestOf(nil))
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/things", nil)
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("shared store down: %d, want 503", resp.StatusCode)
	}
}
