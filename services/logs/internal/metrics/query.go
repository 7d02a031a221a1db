package metrics

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"tori.dev/contract/appmetrics"
	"tori.dev/services/logs/internal/logs"
)

// The read's bounds (DESIGN40, "Metrics") and defaults.
const (
	MaxSpan = 31 * 24 * time.Hour
	// MaxPoints bounds the window's span in steps (its aligned grid may hold one more point).
	MaxPoints   = 1440
	DefaultSpan = time.Hour
	DefaultStep = 60
)

// Metrics are the metric names a read may ask for, in the order the API lists them.
var Metrics = []string{appmetrics.Requests, appmetrics.Latency, appmetrics.CPU, appmetrics.Memory, appmetrics.Instances}

// ErrBeyondRetention means the requested start is older than the account's plan keeps metrics.
var ErrBeyondRetention = errors.New("metrics: start is older than the retention")

// RawQuery is a read's parameters as the caller sent them; an empty string means absent.
type RawQuery struct {
	Metric, Start, End, Step, Process string
}

// Query is a validated read: the metric's points at every Step seconds from Start (aligned
// down to Step) while before End.
type Query struct {
	Metric     string
	Start, End time.Time
	Step       int
	Process    logs.ProcessFilter
	// startDefaulted records that Start was derived from End rather than asked for: retention
	// clamps it rather than refusing it, as the log route does.
	startDefaulted bool
}

func invalid(name, format string, args ...any) error {
	return &logs.InvalidParameterError{Name: name, Reason: fmt.Sprintf(format, args...)}
}

// ParseQuery applies the syntax and bound rules, in the order of the parameters' names in the
// route (metric, start, end, step, process); now is the default end.
func ParseQuery(raw RawQuery, now time.Time) (Query, error) {
	q := Query{Metric: raw.Metric, End: now.UTC(), Step: DefaultStep}
	if q.Metric == "" {
		q.Metric = appmetrics.Requests
	}
	if !slices.Contains(Metrics, q.Metric) {
		return Query{}, invalid("metric", "must be one of %s", strings.Join(Metrics, ", "))
	}
	if raw.End != "" {
		t, err := logs.ParseTimestamp(raw.End)
		if err != nil {
			return Query{}, invalid("end", "must be an ISO 8601 (RFC 3339) timestamp such as 2026-11-22T02:30:00Z")
		}
		q.End = t
	}
	if raw.Start != "" {
		t, err := logs.ParseTimestamp(raw.Start)
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
		return Query{}, invalid("end", "the span from start to end must be at most 31 days")
	}
	if raw.Step != "" {
		n, err := strconv.Atoi(raw.Step)
		if err != nil || !slices.Contains(appmetrics.Steps, n) {
			return Query{}, invalid("step", "must be one of 60, 300 or 3600 (seconds)")
		}
		q.Step = n
	}
	// The span in steps is bounded, not the aligned grid: a day at a minute a step is allowed
	// from any start, though its grid, aligned down, holds one point more (1,441).
	step := time.Duration(q.Step) * time.Second
	if n := (q.End.Sub(q.Start) + step - 1) / step; n > MaxPoints {
		return Query{}, invalid("step", "the window spans %d steps of %d seconds, at most %d are allowed: use a longer step or a shorter window", n, q.Step, MaxPoints)
	}
	f, err := logs.ParseProcessFilter(raw.Process)
	if err != nil {
		return Query{}, err
	}
	if !f.Any() && !PerInstance(q.Metric) {
		return Query{}, invalid("process", "applies only to the cpu, memory and instances metrics: requests and latency are the app's, counted at the edge")
	}
	q.Process = f
	return q, nil
}

// PerInstance reports whether metric is sampled per instance (and so filtered by process).
func PerInstance(metric string) bool {
	return metric == appmetrics.CPU || metric == appmetrics.Memory || metric == appmetrics.Instances
}

// First is the first point's time: Start aligned down to the step (steps align on the Unix
// epoch, so the same step gives the same boundaries in every read).
func (q Query) First() time.Time {
	s := q.Start.Unix()
	return time.Unix(s-mod(s, int64(q.Step)), 0).UTC()
}

// Points is how many points the answer has: one per step boundary from First while before End.
func (q Query) Points() int {
	span := q.End.Sub(q.First())
	if span <= 0 {
		return 0
	}
	step := time.Duration(q.Step) * time.Second
	return int((span + step - 1) / step)
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// RetentionEdge is the oldest moment an account keeping metrics for days may read at now.
func RetentionEdge(now time.Time, days int) time.Time {
	return now.Add(-time.Duration(days) * 24 * time.Hour)
}

// ApplyRetention refuses a start the caller asked for that is older than the plan keeps; a
// defaulted start is clamped to the edge instead (logs.ApplyRetention's rule).
func ApplyRetention(q Query, now time.Time, days int) (Query, error) {
	edge := RetentionEdge(now, days)
	if !q.Start.Before(edge) {
		return q, nil
	}
	if !q.startDefaulted || !q.End.After(edge) {
		return Query{}, ErrBeyondRetention
	}
	q.Start = edge
	return q, nil
}
