package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestServerSpansContinueTheCallersTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })

	var logBuf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logBuf, nil))
	app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
		return c.Status(http.StatusTeapot).SendString("handled")
	}})
	app.Use(ServerSpans("test", log))
	var seen trace.SpanContext
	app.Get("/things/:id", func(c *fiber.Ctx) error {
		seen = trace.SpanContextFromContext(c.UserContext())
		return errors.New("boom")
	})

	caller, parent := tp.Tracer("caller").Start(context.Background(), "gateway")
	req := httptest.NewRequest(http.MethodGet, "/things/42?secret=s3cret", nil)
	otel.GetTextMapPropagator().Inject(caller, propagation.HeaderCarrier(req.Header))
	parent.End()
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusTeapot {
		t.Fatalf("error handler not applied: %d", resp.StatusCode)
	}
	if seen.TraceID() != parent.SpanContext().TraceID() {
		t.Fatalf("handler trace %s, caller's %s", seen.TraceID(), parent.SpanContext().TraceID())
	}
	var server sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindServer {
			server = s
		}
	}
	if server == nil || server.Name() != "GET /things/:id" || server.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("server span %v", server)
	}
	var line map[string]any
	if err := json.Unmarshal(logBuf.Bytes(), &line); err != nil {
		t.Fatalf("access line: %q", logBuf.String())
	}
	if line["route"] != "/things/:id" || line["status"] != float64(http.StatusTeapot) {
		t.Fatalf("access line %v", line)
	}
	if strings.Contains(logBuf.String(), "s3cret") || strings.Contains(logBuf.String(), "/things/42") {
		t.Fatalf("access line names the path or query: %s", logBuf.String())
	}
}
