package httpserver

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"tori.dev/pkg/health"
	"tori.dev/pkg/httperror"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func send(t *testing.T, app *fiber.App, req *http.Request) (int, map[string]any, http.Header) {
	t.Helper()
	res, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	return res.StatusCode, body, res.Header
}

func TestNewAppliesTheHouseDefaults(t *testing.T) {
	app := New(Options{Name: "svc", Log: quiet})
	cfg := app.Config()
	if cfg.ReadTimeout != DefaultReadTimeout || cfg.WriteTimeout != DefaultWriteTimeout || cfg.IdleTimeout != DefaultIdleTimeout {
		t.Fatalf("timeouts = %v %v %v", cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout)
	}
	if cfg.BodyLimit != fiber.DefaultBodyLimit || cfg.StreamRequestBody || cfg.Immutable || cfg.DisableDefaultContentType {
		t.Fatalf("config = %+v", cfg)
	}
	custom := New(Options{Name: "svc", Log: quiet, BodyLimit: 1 << 10, ReadTimeout: time.Second, Streaming: true, Immutable: true, RawContentType: true})
	cc := custom.Config()
	if cc.BodyLimit != 1<<10 || cc.ReadTimeout != time.Second || !cc.StreamRequestBody || !cc.DisablePreParseMultipartForm || !cc.Immutable || !cc.DisableDefaultContentType {
		t.Fatalf("options not applied: %+v", cc)
	}
}

func TestErrorsAndPanicsAnswerInTheContractShape(t *testing.T) {
	errGone := errors.New("gone")
	cases := []struct {
		name   string
		opts   Options
		path   string
		status int
		errMsg string // the body's "error"
	}{
		{"a contract error", Options{}, "/teapot", http.StatusConflict, "slug_taken"},
		{"an unknown error is a bare 500", Options{}, "/fail", http.StatusInternalServerError, "internal"},
		{"a panic is a 500", Options{}, "/panic", http.StatusInternalServerError, "internal"},
		{"a panic is a 500 with metrics only", Options{Observe: MetricsOnly}, "/panic", http.StatusInternalServerError, "internal"},
		{"no route is 404", Options{}, "/nowhere", http.StatusNotFound, "not found"},
		{"Translate maps a use case's error", Options{Translate: func(err error) error {
			if errors.Is(err, errGone) {
				return httperror.New(http.StatusGone, "gone")
			}
			return err
		}}, "/gone", http.StatusGone, "gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Name, tc.opts.Log = "svc", quiet
			app := New(tc.opts)
			app.Get("/teapot", func(*fiber.Ctx) error { return httperror.New(http.StatusConflict, "slug_taken") })
			app.Get("/fail", func(*fiber.Ctx) error { return errors.New("pq: secret at /home/x") })
			app.Get("/panic", func(*fiber.Ctx) error { panic("boom") })
			app.Get("/gone", func(*fiber.Ctx) error { return errGone })
			status, body, _ := send(t, app, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if status != tc.status || body["error"] != tc.errMsg {
				t.Fatalf("%s: %d %v, want %d %s", tc.path, status, body, tc.status, tc.errMsg)
			}
			if raw, _ := json.Marshal(body); strings.Contains(string(raw), "secret") {
				t.Fatalf("detail leaked: %s", raw)
			}
		})
	}
}

func TestHealthRoutes(t *testing.T) {
	id := health.NewIdentity("svc", "v1")
	app := New(Options{Name: "svc", Log: quiet, Health: &id})
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200} {
		if status, _, _ := send(t, app, httptest.NewRequest(http.MethodGet, path, nil)); status != want {
			t.Errorf("%s = %d, want %d", path, status, want)
		}
	}
	custom := New(Options{Name: "svc", Log: quiet, Health: &id, Ready: func(c *fiber.Ctx) error { return c.SendStatus(http.StatusTeapot) }})
	if status, _, _ := send(t, custom, httptest.NewRequest(http.MethodGet, "/readyz", nil)); status != http.StatusTeapot {
		t.Errorf("custom /readyz = %d", status)
	}
	bare := New(Options{Name: "svc", Log: quiet})
	if status, _, _ := send(t, bare, httptest.NewRequest(http.MethodGet, "/healthz", nil)); status != http.StatusNotFound {
		t.Errorf("/healthz without Health = %d, want 404", status)
	}
}

func TestRequestConfigIsInstalledPerRequest(t *testing.T) {
	app := New(Options{Name: "svc", Log: quiet, RequestConfig: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if string(h.Method()) == fiber.MethodPost {
			return fasthttp.RequestConfig{ReadTimeout: time.Hour}
		}
		return fasthttp.RequestConfig{}
	}})
	hook := app.Server().HeaderReceived
	if hook == nil {
		t.Fatal("no per-request hook")
	}
	var post, get fasthttp.RequestHeader
	post.SetMethod(fiber.MethodPost)
	get.SetMethod(fiber.MethodGet)
	if got := hook(&post).ReadTimeout; got != time.Hour {
		t.Errorf("POST read timeout = %v", got)
	}
	if got := hook(&get).ReadTimeout; got != 0 {
		t.Errorf("GET read timeout = %v, want the server's", got)
	}
	if New(Options{Name: "svc", Log: quiet}).Server().HeaderReceived != nil {
		t.Error("hook installed without RequestConfig")
	}
}
