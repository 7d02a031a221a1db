package logs

import "time"

// RetentionEdge is the oldest moment an account keeping logs for days may read at now.
func RetentionEdge(now time.Time, days int) time.Time {
	return now.Add(-time.Duration(days) * 24 * time.Hour)
}

// ApplyRetention refuses a start the caller asked for that is older than the edge. A start
// that was only defaulted (one hour before an end near the edge) is clamped to the edge
// instead, since the caller never asked for the older part; only when nothing of the window
// is left is that refused too.
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
