package logs

import (
	"errors"
	"testing"
	"time"
)

func TestParseStreamQuery(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	c := Cursor{Timestamp: now.Add(-time.Minute), ID: 42}
	tests := []struct {
		name      string
		raw       RawStreamQuery
		wantStart time.Time
		wantAfter *Cursor
		badParam  string
	}{
		{name: "defaults to now", raw: RawStreamQuery{}, wantStart: now},
		{name: "start", raw: RawStreamQuery{Start: "2026-11-26T11:00:00Z"}, wantStart: now.Add(-time.Hour)},
		{name: "cursor moves start", raw: RawStreamQuery{Cursor: c.Encode()}, wantStart: c.Timestamp, wantAfter: &c},
		{name: "Last-Event-ID wins over cursor", raw: RawStreamQuery{Cursor: "junk", LastEventID: c.Encode()}, wantStart: c.Timestamp, wantAfter: &c},
		{name: "bad start", raw: RawStreamQuery{Start: "yesterday"}, badParam: "start"},
		{name: "bad end", raw: RawStreamQuery{End: "soon"}, badParam: "end"},
		{name: "end before start", raw: RawStreamQuery{Start: "2026-11-26T11:00:00Z", End: "2026-11-26T10:00:00Z"}, badParam: "end"},
		{name: "bad cursor", raw: RawStreamQuery{Cursor: "nope"}, badParam: "cursor"},
		{name: "bad Last-Event-ID", raw: RawStreamQuery{LastEventID: "nope"}, badParam: "Last-Event-ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseStreamQuery(tt.raw, now)
			if tt.badParam != "" {
				var ip *InvalidParameterError
				if !errors.As(err, &ip) || ip.Name != tt.badParam {
					t.Fatalf("err = %v, want invalid %s", err, tt.badParam)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !q.Start.Equal(tt.wantStart) {
				t.Errorf("start = %v, want %v", q.Start, tt.wantStart)
			}
			if (q.After == nil) != (tt.wantAfter == nil) || q.After != nil && *q.After != *tt.wantAfter {
				t.Errorf("after = %v, want %v", q.After, tt.wantAfter)
			}
		})
	}
}

func TestCheckStreamRetention(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	old := StreamQuery{Start: now.Add(-8 * 24 * time.Hour)}
	if _, err := CheckStreamRetention(old, true, now, 7); !errors.Is(err, ErrBeyondRetention) {
		t.Fatalf("explicit old start: err = %v, want ErrBeyondRetention", err)
	}
	resumed := StreamQuery{Start: old.Start, After: &Cursor{Timestamp: old.Start, ID: 1}}
	q, err := CheckStreamRetention(resumed, true, now, 7)
	if err != nil || !q.Start.Equal(now.Add(-7*24*time.Hour)) {
		t.Fatalf("resumed old cursor: %v, %v; want clamped to the edge", q.Start, err)
	}
}
