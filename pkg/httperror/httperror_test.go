package httperror

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestHandlerWritesContractBodies(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: Handler(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	app.Get("/limited", func(c *fiber.Ctx) error {
		return New(http.StatusTooManyRequests, "rate_limited").WithRetryAfter(0)
	})
	app.Get("/wrapped", func(c *fiber.Ctx) error {
		return fmt.Errorf("lookup: %w", New(http.StatusForbidden, "app_limit_reached").WithLimit(1, "nestling"))
	})
	app.Get("/boom", func(c *fiber.Ctx) error {
		return errors.New("pq: secret detail at /home/x")
	})

	cases := []struct {
		path       string
		status     int
		body       string
		retryAfter string
	}{
		{"/limited", 429, `{"error":"rate_limited","code":"rate_limited","retryAfter":1,"retryAfterSeconds":1}`, "1"},
		{"/wrapped", 403, `{"error":"app_limit_reached","code":"app_limit_reached","limit":1,"plan":"nestling"}`, ""},
		{"/boom", 500, `{"error":"internal"}`, ""},
		{"/nowhere", 404, `{"error":"not found"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := app.Test(httptest.NewRequest(http.MethodGet, tc.path, nil))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if strings.TrimSpace(string(b)) != tc.body {
				t.Fatalf("body %s, want %s", b, tc.body)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Fatalf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if !json.Valid(b) {
				t.Fatal("not JSON")
			}
		})
	}
}
