package httperror

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// syncBuffer is a log sink safe to read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRecoverAnswers500AndKeepsServing(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: Handler(log)})
	app.Use(Recover(log))
	app.Post("/boom", func(c *fiber.Ctx) error { panic("nil map in handler") })
	app.Get("/ok", func(c *fiber.Ctx) error { return c.SendString("still here") })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	base := "http://" + ln.Addr().String()

	req, _ := http.NewRequest(http.MethodPost, base+"/boom", strings.NewReader(`{"password":"body-secret"}`))
	req.Header.Set("Authorization", "Bearer svc_header-secret")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || string(body) != `{"error":"internal"}` {
		t.Fatalf("panic answered %d %s, want 500 {\"error\":\"internal\"}", resp.StatusCode, body)
	}

	for i := 0; i < 3; i++ { // the process and the listener survived
		resp, err := http.Get(base + "/ok")
		if err != nil {
			t.Fatalf("after the panic: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "still here" {
			t.Fatalf("after the panic: %d %s", resp.StatusCode, b)
		}
	}

	out := logs.String()
	for _, want := range []string{"handler panicked", "nil map in handler", "recover_test.go", `"route":"/boom"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"header-secret", "body-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("log leaks %q:\n%s", secret, out)
		}
	}
}
