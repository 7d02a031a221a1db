package httpapi

import (
	"strings"
	"testing"
	"time"

	"tori.dev/services/logs/internal/logs"
)

func TestSSEFraming(t *testing.T) {
	ts := time.Date(2026, 11, 26, 12, 0, 0, 7_000_000, time.UTC)
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"entry with a deploy", appendEntryEvent(nil, "CUR", logs.Entry{ID: 9, Timestamp: ts, Stream: logs.StreamStdout, DeployID: "d1", Message: "hi", Process: "worker.2"}),
			"id: CUR\ndata: {\"id\":\"9\",\"timestamp\":\"2026-11-26T12:00:00.007Z\",\"stream\":\"stdout\",\"deployId\":\"d1\",\"message\":\"hi\",\"process\":\"worker.2\"}\n\n"},
		{"newlines stay inside the data line", appendEntryEvent(nil, "C\nX", logs.Entry{ID: 1, Timestamp: ts, Stream: logs.StreamStderr, Message: "a\nb\r\n\nc"}),
			"id: CX\ndata: {\"id\":\"1\",\"timestamp\":\"2026-11-26T12:00:00.007Z\",\"stream\":\"stderr\",\"deployId\":null,\"message\":\"a\\nb\\r\\n\\nc\",\"process\":null}\n\n"},
		{"close", appendCloseEvent(nil, ReasonAppDeleted),
			"event: close\ndata: {\"reason\":\"app_deleted\",\"message\":\"The app was deleted; the stream has ended.\"}\n\n"},
		{"heartbeat is a comment", appendHeartbeat(nil, ts), ": heartbeat 2026-11-26T12:00:00Z\n\n"},
		{"retry", appendRetry(nil, 2*time.Second), "retry: 2000\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Fatalf("got  %q\nwant %q", tt.got, tt.want)
			}
			// Exactly one blank line, at the end: one event, never split.
			if strings.Count(string(tt.got), "\n\n") != 1 || !strings.HasSuffix(string(tt.got), "\n\n") {
				t.Fatalf("not exactly one event: %q", tt.got)
			}
		})
	}
	for reason := range closeMessages {
		if !strings.Contains(string(appendCloseEvent(nil, reason)), `"message":"`+closeMessages[reason]) {
			t.Errorf("%s: message missing", reason)
		}
	}
}
