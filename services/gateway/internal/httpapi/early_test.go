package httpapi_test

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/httperror"
	"tori.dev/pkg/logging"
)

// fiberService is a service built as every Tori service is (Fiber, a body limit, the
// contract's error handler). Over its limit it answers 413 from the headers alone and closes
// the connection with the body unread.
func fiberService(t *testing.T, bodyLimit int) string {
	t.Helper()
	app := fiber.New(fiber.Config{
		BodyLimit:             bodyLimit,
		DisableStartupMessage: true,
		ErrorHandler:          httperror.Handler(logging.New("svc", &bytes.Buffer{})),
	})
	app.Post("/api/tokens", func(c *fiber.Ctx) error {
		return c.Status(201).JSON(fiber.Map{"bytes": len(c.Body())})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

// A body over a service's limit gets the service's own 413, never a 502 or 503. The write
// error and the answer race inside the gateway; concurrent senders keep both cores busy, which
// is when the error used to win (about one request in a few hundred).
func TestAServiceAnswerBeforeTheBodyIsRelayed(t *testing.T) {
	svc := fiberService(t, 16<<10)
	h := start(t, options{override: map[string]string{"identity": svc}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wrong []string
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				size := 100 << 10
				if i%4 == 0 {
					size = 400 << 10 // still under the gateway's inline limit, so the service judges it
				}
				r := h.do("POST", "/api/tokens", "svc_bench_early_"+strconv.Itoa(w), strings.NewReader(`{"name":"`+strings.Repeat("x", size)+`"}`))
				if r.Status != 413 || strings.TrimSpace(string(r.Body)) != `{"error":"payload_too_large","code":"payload_too_large"}` {
					mu.Lock()
					wrong = append(wrong, string(r.Body))
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	if len(wrong) > 0 {
		t.Fatalf("%d of 360 oversized bodies did not get the service's 413; first: %s", len(wrong), wrong[0])
	}
	expect(t, h.do("POST", "/api/tokens", "svc_alice", strings.NewReader(`{"name":"ok"}`)), 201, "")
}
