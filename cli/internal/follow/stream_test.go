package follow

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"tori.dev/cli/internal/api"
)

func TestReadEvents(t *testing.T) {
	in := "retry: 2000\n\n: heartbeat\n\nid: a\ndata: {\"message\":\"one\"}\n\n" +
		"id: b\r\ndata: x\r\ndata: y\r\n\r\nevent: close\ndata: {\"reason\":\"idle_timeout\"}\n\nid: c\ndata: unterminated"
	var got []Event
	if err := ReadEvents(strings.NewReader(in), func(e Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{ID: "a", Data: `{"message":"one"}`},
		{ID: "b", Data: "x\ny"},
		{Event: "close", Data: `{"reason":"idle_timeout"}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

// fakeStreams answers each Open with the next scripted body or error, recording the
// Last-Event-ID each was opened with.
type fakeStreams struct {
	answers []any // string body or error
	lastIDs []string
}

func (f *fakeStreams) open(_ context.Context, lastID string) (io.ReadCloser, error) {
	f.lastIDs = append(f.lastIDs, lastID)
	if len(f.answers) == 0 {
		return nil, &api.Error{Status: http.StatusGone}
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	if err, ok := a.(error); ok {
		return nil, err
	}
	return io.NopCloser(strings.NewReader(a.(string))), nil
}

func entry(id, msg string) string {
	return "id: " + id + "\ndata: {\"id\":\"" + id + "\",\"message\":\"" + msg + "\"}\n\n"
}

func TestStreamReconnectsWithLastEventIDAndBackoff(t *testing.T) {
	f := &fakeStreams{answers: []any{
		entry("c1", "one") + entry("c2", "two"),           // dropped without a final event
		errors.New("connection refused"),                  // the API away for a moment
		&api.Error{Status: http.StatusServiceUnavailable}, // then not ready
		entry("c3", "three") + "event: close\ndata: {\"reason\":\"lifetime\",\"message\":\"reconnect\"}\n\n",
		entry("c4", "four") + "event: close\ndata: {\"reason\":\"token_revoked\",\"message\":\"revoked\"}\n\n",
	}}
	var lines []string
	var waits []time.Duration
	s := &Stream{
		Open:  f.open,
		Line:  func(e api.LogEntry) { lines = append(lines, e.Message) },
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
	}
	err := s.Run(context.Background())
	if !errors.Is(err, ErrStreamEnded) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("Run = %v, want ErrStreamEnded with the server's message", err)
	}
	if got := strings.Join(lines, " "); got != "one two three four" {
		t.Fatalf("lines %q", got)
	}
	if want := []string{"", "c2", "c2", "c2", "c3"}; !reflect.DeepEqual(f.lastIDs, want) {
		t.Fatalf("opened with Last-Event-ID %q, want %q", f.lastIDs, want)
	}
	// 500 ms after the events, doubling over the failures, back to 500 ms once events came.
	if want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 500 * time.Millisecond}; !reflect.DeepEqual(waits, want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
}

func TestStreamStopsOnAnswersARetryCannotChange(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 410} {
		f := &fakeStreams{answers: []any{&api.Error{Status: status}}}
		s := &Stream{Open: f.open, Line: func(api.LogEntry) {}, Sleep: func(context.Context, time.Duration) error { return nil }}
		var apiErr *api.Error
		if err := s.Run(context.Background()); !errors.As(err, &apiErr) || apiErr.Status != status || len(f.lastIDs) != 1 {
			t.Fatalf("%d: Run = %v after %d opens", status, err, len(f.lastIDs))
		}
	}
}

func TestStreamBackoffIsCapped(t *testing.T) {
	var answers []any
	for range 8 {
		answers = append(answers, &api.Error{Status: http.StatusTooManyRequests})
	}
	f := &fakeStreams{answers: answers}
	var waits []time.Duration
	s := &Stream{Open: f.open, Line: func(api.LogEntry) {}, MaxBackoff: 4 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	_ = s.Run(context.Background())
	if waits[len(waits)-1] != 4*time.Second || waits[0] != 500*time.Millisecond {
		t.Fatalf("waits %v: want from 500ms doubling up to 4s", waits)
	}
}
