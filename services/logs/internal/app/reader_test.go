package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"tori.dev/services/logs/internal/logs"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type fakeApps map[string]string // account/slug -> app id

func (f fakeApps) AppID(_ context.Context, account, slug string) (string, error) {
	if id, ok := f[account+"/"+slug]; ok {
		return id, nil
	}
	return "", logs.ErrNotFound
}

// fakeEntries serves a fixed, ordered slice like the store would.
type fakeEntries []logs.Entry

func (f fakeEntries) Entries(_ context.Context, _ string, from, to time.Time, after *logs.Cursor, limit int) ([]logs.Entry, error) {
	var out []logs.Entry
	for _, e := range f {
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
