package httpapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"tori.dev/contract/apitime"
	"tori.dev/services/logs/internal/logs"
)

// Server-Sent Events framing (https://html.spec.whatwg.org/multipage/server-sent-events.html).
// Every event is written whole and then flushed, so a client (or the gateway) never sees
// half an event.

// streamEntry is one entry as the window route renders it.
type streamEntry struct {
	ID        string  `json:"id"`
	Timestamp string  `json:"timestamp"`
	Stream    string  `json:"stream"`
	DeployID  *string `json:"deployId"`
	Message   string  `json:"message"`
	Process   *string `json:"process"`
}

// Close reasons: the final event's `reason`.
const (
	ReasonAppDeleted = "app_deleted"
	ReasonShutdown   = "shutdown"
	ReasonIdle       = "idle_timeout"
	ReasonLifetime   = "lifetime"
	ReasonEnd        = "end_reached"
	ReasonError      = "error"
)

// closeMessages say what the client should do after each reason.
var closeMessages = map[string]string{
	ReasonAppDeleted: "The app was deleted; the stream has ended.",
	ReasonShutdown:   "The logs service is restarting; reconnect with Last-Event-ID to resume.",
	ReasonIdle:       "No line arrived for a long time; reconnect with Last-Event-ID to resume.",
	ReasonLifetime:   "The stream reached its longest lifetime; reconnect with Last-Event-ID to resume.",
	ReasonEnd:        "Every line up to end has been sent.",
	ReasonError:      "The logs could not be read; reconnect with Last-Event-ID to resume.",
}

// appendEntryEvent writes one entry event: its resume id and the entry as JSON on one data
// line (JSON escapes newlines, so a message never breaks the framing).
func appendEntryEvent(b []byte, id string, e logs.Entry) []byte {
	se := streamEntry{
		ID:        strconv.FormatInt(e.ID, 10),
		Timestamp: apitime.Format(e.Timestamp),
		Stream:    string(e.Stream),
		Message:   e.Message,
	}
	if e.DeployID != "" {
		se.DeployID = &e.DeployID
	}
	if e.Process != "" {
		se.Process = &e.Process
	}
	data, _ := json.Marshal(se) // strings and a pointer to one: cannot fail
	b = append(b, "id: "...)
	b = append(b, sanitizeField(id)...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// appendCloseEvent writes the final event: `event: close` with the reason and a sentence.
func appendCloseEvent(b []byte, reason string) []byte {
	data, _ := json.Marshal(struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}{reason, closeMessages[reason]})
	b = append(b, "event: close\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// appendHeartbeat writes a comment line, which every SSE client ignores; it keeps proxies
// and the client's own idle timers from closing a quiet stream, and detects a gone client.
func appendHeartbeat(b []byte, now time.Time) []byte {
	b = append(b, ": heartbeat "...)
	b = now.UTC().AppendFormat(b, time.RFC3339)
	return append(b, "\n\n"...)
}

// appendRetry tells EventSource clients how long to wait before reconnecting.
func appendRetry(b []byte, d time.Duration) []byte {
	b = append(b, "retry: "...)
	b = append(b, strconv.FormatInt(d.Milliseconds(), 10)...)
	return append(b, "\n\n"...)
}

// sanitizeField keeps a field value on its line; ids are base64url and never need it.
func sanitizeField(s string) string {
	return strings.NewReplacer("\n", "", "\r", "").Replace(s)
}
