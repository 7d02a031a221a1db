package httpapi_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/httperror"
	"tori.dev/pkg/logging"
)

// signedService is a service as Tori's are: callerid's middleware on its routes, a JSON route
// reading its body whole and a deploy upload route streaming it through callerid.Body.
func signedService(t *testing.T) string {
	t.Helper()
	app := fiber.New(fiber.Config{DisableStartupMessage: true, StreamRequestBody: true, DisablePreParseMultipartForm: true,
		ErrorHandler: httperror.Handler(logging.New("svc", &bytes.Buffer{}))})
	app.Post("/api/apps", callerid.Middleware(key, true, httperror.Unauthorized), func(c *fiber.Ctx) error {
		return c.Status(201).Send(c.Body())
	})
	app.Post("/api/apps/:slug/deploys", callerid.StreamingMiddleware(key, true, httperror.Unauthorized), func(c *fiber.Ctx) error {
		body := callerid.Body(key, c)
		n, err := io.Copy(io.Discard, body)
		if err != nil {
			return httperror.Unauthorized
		}
		return c.Status(201).SendString(strconv.FormatInt(n, 10) + " " + c.Get(callerid.HeaderDeclaredLength))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

// What the gateway forwards passes a service's body check: a JSON body by its signed digest,
// a deploy upload by the seal in its trailer, declared length carried beside it.
func TestForwardedBodiesPassTheServicesCheck(t *testing.T) {
	svc := signedService(t)
	h := start(t, options{override: map[string]string{"apps": svc, "deploys": svc}})
	json := `{"name":"` + strings.Repeat("j", 100<<10) + `"}`
	r := h.do("POST", "/api/apps", "svc_alice", strings.NewReader(json))
	if r.Status != 201 || string(r.Body) != json {
		t.Fatalf("JSON body: %d, %d bytes", r.Status, len(r.Body))
	}
	const size = 3 << 20
	req, err := http.NewRequest("POST", h.url+"/api/apps/site/deploys", io.LimitReader(filler{}, size))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer svc_alice")
	req.Header.Set("Content-Type", "multipart/form-data; boundary=xyz")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 201 || string(b) != strconv.Itoa(size)+" "+strconv.Itoa(size) {
		t.Fatalf("upload: %d %s", resp.StatusCode, b)
	}
}
