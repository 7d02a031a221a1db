package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func TestLinesCarryTraceID(t *testing.T) {
	var buf bytes.Buffer
	log := New("unit", &buf)
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("t").Start(context.Background(), "op")
	log.InfoContext(ctx, "hello", "k", "v")
	span.End()

	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
	}
	if line["trace_id"] != span.SpanContext().TraceID().String() {
		t.Fatalf("trace_id = %v, want %s", line["trace_id"], span.SpanContext().TraceID())
	}
	if line["service"] != "unit" || line["msg"] != "hello" || line["k"] != "v" {
		t.Fatalf("unexpected line %v", line)
	}
}

func TestLinesWithoutSpanHaveNoTraceID(t *testing.T) {
	var buf bytes.Buffer
	New("unit", &buf).Info("plain")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if _, ok := line["trace_id"]; ok {
		t.Fatalf("unexpected trace_id in %v", line)
	}
}
