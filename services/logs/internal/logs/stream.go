package logs

import "time"

// RawStreamQuery is a stream's parameters as the caller sent them; an empty string means
// absent. LastEventID is the SSE reconnection header, which wins over Cursor.
type RawStreamQuery struct {
	Start, End, Cursor, LastEventID, Process string
}

// StreamQuery is a validated stream: entries with Start <= timestamp (< End when End is
// set), strictly after After when it is set.
type StreamQuery struct {
	Start   time.Time
	End     time.Time // zero: no end
	After   *Cursor
	Process ProcessFilter
}

// ParseStreamQuery applies the window route's rules to a stream: timestamps are RFC 3339,
// end is not before start, a cursor (or Last-Event-ID) is one this service wrote. Without
// start or a cursor the stream begins at now: only new lines.
func ParseStreamQuery(raw RawStreamQuery, now time.Time) (StreamQuery, error) {
	q := StreamQuery{Start: now.UTC()}
	if raw.Start != "" {
		t, err := parseTimestamp(raw.Start)
		if err != nil {
			return StreamQuery{}, invalid("start", "must be an ISO 8601 (RFC 3339) timestamp such as 2026-11-22T02:30:00Z")
		}
		q.Start = t
	}
	if raw.End != "" {
		t, err := parseTimestamp(raw.End)
		if err != nil {
			return StreamQuery{}, invalid("end", "must be an ISO 8601 (RFC 3339) timestamp such as 2026-11-22T02:30:00Z")
		}
		if t.Before(q.Start) && raw.Start != "" {
			return StreamQuery{}, invalid("end", "must not be before start")
		}
		q.End = t
	}
	name, value := "cursor", raw.Cursor
	if raw.LastEventID != "" {
		name, value = "Last-Event-ID", raw.LastEventID
	}
	if value != "" {
		c, err := DecodeCursor(value)
		if err != nil {
			return StreamQuery{}, invalid(name, "must be an event id or `next` value returned by this service")
		}
		q.After = &c
		// A cursor says where the caller stopped; start then only bounds it from below.
		if raw.Start == "" || c.Timestamp.After(q.Start) {
			q.Start = c.Timestamp
		}
	}
	f, err := parseProcessFilter(raw.Process)
	if err != nil {
		return StreamQuery{}, err
	}
	q.Process = f
	return q, nil
}

// CheckStreamRetention refuses an explicit start older than the plan keeps, as the window
// route does (410); a resumed stream's cursor older than that is clamped instead, since the
// caller cannot help what it last saw.
func CheckStreamRetention(q StreamQuery, explicitStart bool, now time.Time, days int) (StreamQuery, error) {
	edge := now.Add(-time.Duration(days) * 24 * time.Hour)
	if q.Start.Before(edge) {
		if explicitStart && q.After == nil {
			return StreamQuery{}, ErrBeyondRetention
		}
		q.Start = edge
	}
	return q, nil
}
