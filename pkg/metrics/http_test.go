package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Requests are counted and timed under their route template, errors under 5xx, and a path
// no route takes under "unmatched"; /metrics shows the families.
func TestFiberCountsByRouteTemplate(t *testing.T) {
	app := fiber.New()
	app.Use(Fiber())
	app.Get("/api/things/:id", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Post("/api/things/:id/fail", func(c *fiber.Ctx) error { return errors.New("boom") })
	app.Get("/metrics", Handler())

	ok := httpRequests.WithLabelValues("GET", "/api/things/:id", "200")
	failed := httpRequests.WithLabelValues("POST", "/api/things/:id/fail", "500")
	errs := httpErrors.WithLabelValues("POST", "/api/things/:id/fail")
	unmatched := httpRequests.WithLabelValues("GET", Unmatched, "404")
	before := []float64{testutil.ToFloat64(ok), testutil.ToFloat64(failed), testutil.ToFloat64(errs), testutil.ToFloat64(unmatched)}

	for _, r := range []struct{ method, path string }{
		{"GET", "/api/things/1"}, {"GET", "/api/things/2"},
		{"POST", "/api/things/3/fail"},
		{"GET", "/no/such/path/4"},
	} {
		if _, err := app.Test(httptest.NewRequest(r.method, r.path, nil)); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []struct {
		name string
		got  float64
		add  float64
	}{
		{"GET 200", testutil.ToFloat64(ok), 2},
		{"POST 500", testutil.ToFloat64(failed), 1},
		{"5xx errors", testutil.ToFloat64(errs), 1},
		{"unmatched 404", testutil.ToFloat64(unmatched), 1},
	} {
		if want.got-before[i] != want.add {
			t.Errorf("%s: moved by %v, want %v", want.name, want.got-before[i], want.add)
		}
	}

	resp, err := app.Test(httptest.NewRequest("GET", "/metrics", nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	for _, family := range []string{
		"# TYPE tori_http_requests_total counter",
		"# TYPE tori_http_request_errors_total counter",
		"# TYPE tori_http_request_duration_seconds histogram",
		`tori_http_request_duration_seconds_bucket{method="GET",route="/api/things/:id",le="0.001"}`,
		"# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(string(body), family) {
			t.Errorf("/metrics lacks %q", family)
		}
	}
	for _, raw := range []string{"/api/things/1", "/no/such/path"} {
		if strings.Contains(string(body), raw) {
			t.Errorf("/metrics names the raw path %q", raw)
		}
	}
}

// A method handed over in a buffer the server reuses (fasthttp's, as Fiber's c.Method() is)
// must not become a label value: when the buffer is overwritten the registry would hold two
// series with one name and /metrics would answer an error. Unknown methods share "other".
func TestMethodLabelsAreTheirOwnStrings(t *testing.T) {
	buf := []byte("POST")
	method := unsafe.String(&buf[0], len(buf))
	ObserveRequest(method, "/api/label-test", 201, time.Millisecond)
	copy(buf, "GETT") // the next request on the connection
	ObserveRequest("GET", "/api/label-test", 201, time.Millisecond)
	ObserveRequest("BREW", "/api/label-test", 201, time.Millisecond)
	ObserveRequest("PROPFIND", "/api/label-test", 201, time.Millisecond)

	if _, err := prometheus.DefaultGatherer.Gather(); err != nil {
		t.Fatalf("gathering: %v", err)
	}
	for method, want := range map[string]float64{"POST": 1, "GET": 1, "other": 2} {
		if got := testutil.ToFloat64(httpRequests.WithLabelValues(method, "/api/label-test", "201")); got != want {
			t.Errorf("%s: %v, want %v", method, got, want)
		}
	}
}
