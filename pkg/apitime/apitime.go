// Package apitime is the one form of a time in the HTTP API's JSON: RFC 3339, UTC, with
// milliseconds (docs/conventions.md, "2026-11-22T02:30:00.000Z"). Every service's httpapi
// writes times through it, so no answer carries microseconds or a local offset.
package apitime

import "time"

// Layout is the API's time layout; with a UTC time it always ends in "Z".
const Layout = "2006-01-02T15:04:05.000Z07:00"

// Format is t in the API's form.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// Append appends t in the API's form (unquoted) to b, for encoders that write bytes.
func Append(b []byte, t time.Time) []byte { return t.UTC().AppendFormat(b, Layout) }

// Time is a time.Time that encoding/json writes in the API's form.
type Time time.Time

// MarshalJSON writes t as a quoted string in the API's form.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(Layout)+2)
	b = append(b, '"')
	b = Append(b, time.Time(t))
	return append(b, '"'), nil
}

// OrNull is t as a nullable Time: nil (JSON null) when t is nil.
func OrNull(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	at := Time(*t)
	return &at
}
