package logs

import (
	"strconv"
	"strings"
	"time"

	"tori.dev/contract/limits"
)

// The read limits of the contract (contract/limits, which the command line and the console
// ask within), and the defaults, which are this service's alone.
const (
	MaxSpan      = limits.LogSpan
	DefaultSpan  = time.Hour
	DefaultLimit = 100
	MinLimit     = limits.LogPageMin
	MaxLimit     = limits.LogPageMax
)

// RawQuery is a read's parameters as the caller sent them; an empty string means absent.
type RawQuery struct {
	Start, End, Limit, Cursor, Process string
}

// Query is a validated read of one page: entries with Start <= timestamp < End, after
// After when set, at most Limit of them.
type Query struct {
	Start, End time.Time
	Limit      int
	After      *Cursor
	Process    ProcessFilter
	// startDefaulted records that Start was derived from End rather than asked for, which
	// decides whether retention clamps it or refuses it.
	startDefaulted bool
}

// ParseQuery applies the syntax and span rules. now is the default end.
func ParseQuery(raw RawQuery, now time.Time) (q Query, err error) {
	q = Query{End: now.UTC(), Limit: DefaultLimit}
	if raw.End != "" {
		t, err := parseTimestamp(raw.End)
		if err != nil {
			return Query{}, invalid("end", "must be an ISO 8601 (RFC 3339) timestamp such as 2026-11-22T02:30:00Z")
		}
		q.End = t
	}
	if raw.Start != "" {
		t, err := parseTimestamp(raw.Start)
		if err != nil {
			return Query{}, invalid("start", "must be an ISO 8601 (RFC 3339) timestamp such as 2026-11-22T02:30:00Z")
		}
		q.Start = t
	} else {
		q.Start = q.End.Add(-DefaultSpan)
		q.startDefaulted = true
	}
	if q.End.Before(q.Start) {
		return Query{}, invalid("end", "must not be before start")
	}
	if q.End.Sub(q.Start) > MaxSpan {
		return Query{}, invalid("end", "the span from start to end must be at most 24 hours")
	}
	if raw.Limit != "" {
		n, err := strconv.Atoi(raw.Limit)
		if err != nil || n < MinLimit || n > MaxLimit {
			return Query{}, invalid("limit", "must be an integer from %d to %d", MinLimit, MaxLimit)
		}
		q.Limit = n
	}
	if raw.Cursor != "" {
		c, err := DecodeCursor(raw.Cursor)
		if err != nil {
			return Query{}, invalid("cursor", "must be a `next` value returned by this route")
		}
		q.After = &c
	}
	if q.Process, err = parseProcessFilter(raw.Process); err != nil {
		return Query{}, err
	}
	return q, nil
}

// parseTimestamp reads RFC 3339, the ISO 8601 profile every client library writes. A '+'
// of an unescaped offset arrives as a space after query decoding; reading it back as '+'
// accepts the common mistake without making any other string valid.
func parseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil && strings.Count(s, " ") == 1 {
		t, err = time.Parse(time.RFC3339Nano, strings.Replace(s, " ", "+", 1))
	}
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}
