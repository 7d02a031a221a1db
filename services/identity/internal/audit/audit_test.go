package audit

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestCursorRoundTrips(t *testing.T) {
	c := Cursor{At: time.Date(2026, 11, 22, 2, 30, 0, 123456000, time.UTC), ID: uuid.NewString()}
	got, err := ParseCursor(c.String())
	if err != nil || !got.At.Equal(c.At) || got.ID != c.ID {
		t.Fatalf("%+v %v, want %+v", got, err, c)
	}
	for _, bad := range []string{"", "!!", "MTIz", "MTIzLm5vdC1hLXV1aWQ", c.String() + "="} {
		if _, err := ParseCursor(bad); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestWindow(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		name  string
		q     Query
		days  int
		start time.Time
		limit int
		err   error
	}{
		{"defaults: from the oldest kept, 50", Query{}, 30, now.Add(-30 * day), 50, nil},
		{"no plan copy: nestling's 7", Query{}, 0, now.Add(-7 * day), 50, nil},
		{"start inside", Query{Start: now.Add(-day), Limit: 200}, 7, now.Add(-day), 200, nil},
		{"start at the edge, computed a moment earlier", Query{Start: now.Add(-7*day - 30*time.Second)}, 7, now.Add(-7*day - 30*time.Second), 50, nil},
		{"start beyond", Query{Start: now.Add(-8 * day)}, 7, time.Time{}, 0, ErrBeyondRetention},
		{"start beyond a longer plan", Query{Start: now.Add(-366 * day)}, 365, time.Time{}, 0, ErrBeyondRetention},
	} {
		got, err := tc.q.Window(tc.days, now)
		if !errors.Is(err, tc.err) || (err == nil && (!got.Start.Equal(tc.start) || got.Limit != tc.limit)) {
			t.Errorf("%s: %+v %v", tc.name, got, err)
		}
	}
}
