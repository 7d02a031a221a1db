package usecase

import (
	"context"
	"errors"
	"testing"
	"time"

	"tori.dev/services/logs/internal/logs"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type fakeApps map[string]string // account/slug -> app id, no plan copy

func (f fakeApps) Target(_ context.Context, account, slug string) (Target, error) {
	if id, ok := f[account+"/"+slug]; ok {
		return Target{AppID: id}, nil
	}
	return Target{}, logs.ErrNotFound
}

// copiedPlan finds every app, with a plan copy of its days.
type copiedPlan int

func (d copiedPlan) Target(context.Context, string, string) (Target, error) {
	return Target{AppID: "app", RetentionDays: int(d)}, nil
}

// fakeEntries serves a fixed, ordered slice like the store would.
type fakeEntries []logs.Entry

func (f fakeEntries) Entries(_ context.Context, _ string, from, to time.Time, after *logs.Cursor, proc logs.ProcessFilter, limit int) ([]logs.Entry, error) {
	var out []logs.Entry
	for _, e := range f {
		if !proc.Matches(e.Process) {
			continue
		}
		if e.Timestamp.Before(from) || !e.Timestamp.Before(to) {
			continue
		}
		if after != nil && (e.Timestamp.Before(after.Timestamp) || e.Timestamp.Equal(after.Timestamp) && e.ID <= after.ID) {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, e)
	}
	return out, nil
}

type fixedPlans int

func (p fixedPlans) RetentionDays(context.Context, string) (int, error) { return int(p), nil }

// refusedPlans is the plans' policy with neither a copy nor billing's answer.
type refusedPlans struct{ asked *int }

func (p refusedPlans) RetentionDays(context.Context, string) (int, error) {
	*p.asked++
	return 0, logs.ErrPlanUnavailable
}

func TestReaderPagesToTheEnd(t *testing.T) {
	var all fakeEntries
	for i := range 5 {
		all = append(all, logs.Entry{ID: int64(i + 1), Timestamp: testNow.Add(-time.Minute), Stream: logs.StreamStdout})
	}
	r := NewReader(fakeApps{"acc/web": "app"}, all, fixedPlans(7), func() time.Time { return testNow })
	var got []int64
	cursor := ""
	for range 10 {
		p, err := r.Read(context.Background(), "acc", "web", logs.RawQuery{Limit: "2", Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if p.RetentionDays != 7 {
			t.Fatalf("retention %d", p.RetentionDays)
		}
		for _, e := range p.Entries {
			got = append(got, e.ID)
		}
		if p.Next == nil {
			break
		}
		cursor = p.Next.Encode()
	}
	if len(got) != 5 || got[0] != 1 || got[4] != 5 {
		t.Fatalf("paged ids %v", got)
	}
}

func TestReaderNextOnlyWhenMore(t *testing.T) {
	all := fakeEntries{{ID: 1, Timestamp: testNow.Add(-time.Minute)}, {ID: 2, Timestamp: testNow.Add(-time.Minute)}}
	r := NewReader(fakeApps{"acc/web": "app"}, all, fixedPlans(1), func() time.Time { return testNow })
	p, err := r.Read(context.Background(), "acc", "web", logs.RawQuery{Limit: "2"})
	if err != nil || p.Next != nil || len(p.Entries) != 2 {
		t.Fatalf("exactly limit entries must end paging: next %v, %d entries, %v", p.Next, len(p.Entries), err)
	}
}

func TestReaderFindsTheAppBeforeCheckingParameters(t *testing.T) {
	r := NewReader(fakeApps{}, fakeEntries{}, fixedPlans(1), func() time.Time { return testNow })
	if _, err := r.Read(context.Background(), "acc", "nope", logs.RawQuery{Limit: "0"}); !errors.Is(err, logs.ErrNotFound) {
		t.Fatalf("bad parameter on an unknown app: want not found, got %v", err)
	}
	if _, err := r.Read(context.Background(), "acc", "nope", logs.RawQuery{}); !errors.Is(err, logs.ErrNotFound) {
		t.Fatalf("want not found, got %v", err)
	}
}

// The plan copy read with the app is the retention; the plans' policy (billing) is asked only
// when there is no copy.
func TestReaderUsesThePlanCopyReadWithTheApp(t *testing.T) {
	all := fakeEntries{{ID: 1, Timestamp: testNow.Add(-time.Minute)}}
	asked := 0
	r := NewReader(copiedPlan(3), all, refusedPlans{&asked}, func() time.Time { return testNow })
	p, err := r.Read(context.Background(), "acc", "web", logs.RawQuery{})
	if err != nil || p.RetentionDays != 3 || asked != 0 {
		t.Fatalf("with a copy: retention %d, %v, plans asked %d times", p.RetentionDays, err, asked)
	}
	old := testNow.Add(-4 * 24 * time.Hour)
	q := logs.RawQuery{Start: old.Format(time.RFC3339), End: old.Add(time.Hour).Format(time.RFC3339)}
	if _, err := r.Read(context.Background(), "acc", "web", q); !errors.Is(err, logs.ErrBeyondRetention) {
		t.Fatalf("a start older than the copy's 3 days: want beyond retention, got %v", err)
	}
	r = NewReader(fakeApps{"acc/web": "app"}, all, refusedPlans{&asked}, func() time.Time { return testNow })
	if _, err := r.Read(context.Background(), "acc", "web", logs.RawQuery{}); !errors.Is(err, logs.ErrPlanUnavailable) || asked != 1 {
		t.Fatalf("without a copy: %v after asking the plans %d times", err, asked)
	}
}

// checkedStore is a store that can check a guess in the same trip, counting its trips.
type checkedStore struct {
	target  Target
	entries fakeEntries
	trips   int
}

func (s *checkedStore) Target(context.Context, string, string) (Target, error) {
	s.trips++
	return s.target, nil
}

func (s *checkedStore) Entries(ctx context.Context, appID string, from, to time.Time, after *logs.Cursor, proc logs.ProcessFilter, limit int) ([]logs.Entry, error) {
	s.trips++
	return s.entries.Entries(ctx, appID, from, to, after, proc, limit)
}

func (s *checkedStore) TargetAndEntries(ctx context.Context, _, _, appID string, from, to time.Time, after *logs.Cursor, proc logs.ProcessFilter, limit int) (Target, []logs.Entry, error) {
	s.trips++
	rows, _ := s.entries.Entries(ctx, appID, from, to, after, proc, limit)
	return s.target, rows, nil
}

// The first read of a slug takes two trips (target, then page); the next ones one, while
// the guess holds; a changed target costs the full read again, and is what is answered.
func TestReaderRepeatedReadTakesOneTrip(t *testing.T) {
	st := &checkedStore{target: Target{AppID: "app", RetentionDays: 7}, entries: fakeEntries{{ID: 1, Timestamp: testNow.Add(-time.Minute)}}}
	r := NewReader(st, st, fixedPlans(99), func() time.Time { return testNow })
	read := func() Page {
		t.Helper()
		p, err := r.Read(context.Background(), "acc", "web", logs.RawQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	read()
	if st.trips != 2 {
		t.Fatalf("first read: %d trips, want 2", st.trips)
	}
	for range 3 {
		read()
	}
	if st.trips != 5 {
		t.Fatalf("three more reads: %d trips in all, want 5", st.trips)
	}
	st.target.RetentionDays = 1
	if p := read(); p.RetentionDays != 1 || st.trips != 8 {
		t.Fatalf("after a plan change: retention %d, %d trips in all (want 1 and 8)", p.RetentionDays, st.trips)
	}
	st.target.AppID = "other"
	if p := read(); len(p.Entries) != 1 || st.trips != 11 {
		t.Fatalf("after the slug moved: %d entries, %d trips in all (want 1 and 11)", len(p.Entries), st.trips)
	}
}
