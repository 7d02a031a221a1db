package database

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestPruned(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	day := func(i int, s DumpStatus) Dump {
		return Dump{ID: fmt.Sprintf("%s-%d", s, i), Status: s, CreatedAt: t0.AddDate(0, 0, i)}
	}
	ids := func(ds []Dump) string {
		out := ""
		for _, d := range ds {
			out += d.ID + " "
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		dumps []Dump
		want  string
	}{
		{"seven good", []Dump{day(1, DumpSucceeded), day(2, DumpSucceeded), day(3, DumpSucceeded), day(4, DumpSucceeded), day(5, DumpSucceeded), day(6, DumpSucceeded), day(7, DumpSucceeded)}, ""},
		{"an eighth good drops the oldest", []Dump{day(1, DumpSucceeded), day(2, DumpSucceeded), day(3, DumpSucceeded), day(4, DumpSucceeded), day(5, DumpSucceeded), day(6, DumpSucceeded), day(7, DumpSucceeded), day(8, DumpSucceeded)}, "succeeded-1 "},
		{"a failed one displaces nothing", []Dump{day(1, DumpSucceeded), day(2, DumpSucceeded), day(3, DumpSucceeded), day(4, DumpSucceeded), day(5, DumpSucceeded), day(6, DumpSucceeded), day(7, DumpSucceeded), day(8, DumpFailed)}, ""},
		{"failed ones older than every kept good one go", []Dump{day(0, DumpFailed), day(1, DumpSucceeded), day(2, DumpSucceeded), day(3, DumpSucceeded), day(4, DumpSucceeded), day(5, DumpSucceeded), day(6, DumpSucceeded), day(7, DumpSucceeded), day(8, DumpSucceeded), day(9, DumpFailed)}, "succeeded-1 failed-0 "},
		{"fewer than seven good: every failed one stays", []Dump{day(0, DumpFailed), day(1, DumpSucceeded), day(2, DumpFailed)}, ""},
		{"running ones stay", []Dump{day(1, DumpRunning)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(Pruned(tc.dumps)); got != tc.want {
				t.Fatalf("pruned %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDueNightly(t *testing.T) {
	at := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		now, last time.Time
		want      bool
	}{
		{at(24, 2, 59), time.Time{}, false},
		{at(24, 3, 0), time.Time{}, true},
		{at(24, 3, 0), at(23, 3, 1), true},
		{at(24, 3, 5), at(24, 3, 1), false},
		{at(24, 23, 0), at(24, 2, 0), true},
		{at(24, 23, 0), at(24, 10, 0), false},
	} {
		if got := DueNightly(tc.now, tc.last, 3); got != tc.want {
			t.Errorf("DueNightly(%s, %s) = %v, want %v", tc.now, tc.last, got, tc.want)
		}
	}
}

// TestEveryDumpTransition checks the whole matrix of dump status × cause: a running dump ends
// once, succeeded with its size or failed with none; a report about an ended dump is refused
// with ErrTransition and changes nothing.
func TestEveryDumpTransition(t *testing.T) {
	type move struct {
		from  DumpStatus
		cause DumpCause
	}
	want := map[move]Dump{
		{DumpRunning, Dumped}:    {Status: DumpSucceeded, SizeBytes: 4096},
		{DumpRunning, NotDumped}: {Status: DumpFailed, SizeBytes: 0},
	}
	for _, from := range []DumpStatus{DumpRunning, DumpSucceeded, DumpFailed} {
		for _, cause := range []DumpCause{Dumped, NotDumped} {
			t.Run(string(from)+"/"+string(cause), func(t *testing.T) {
				d := Dump{ID: "d", Status: from, SizeBytes: 7}
				err := d.Apply(cause, 4096)
				to, allowed := want[move{from, cause}]
				if !allowed {
					if !errors.Is(err, ErrTransition) {
						t.Fatalf("got %v, want ErrTransition", err)
					}
					if d.Status != from || d.SizeBytes != 7 {
						t.Fatalf("a refused move changed the dump: %+v", d)
					}
					return
				}
				if err != nil || d.Status != to.Status || d.SizeBytes != to.SizeBytes {
					t.Fatalf("got %v, %s of %d bytes; want %s of %d", err, d.Status, d.SizeBytes, to.Status, to.SizeBytes)
				}
			})
		}
	}
}
