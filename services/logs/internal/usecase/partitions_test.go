package usecase_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

func TestPartitionsAheadAndDropped(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	appID := uuid.NewString()
	day := func(d time.Time) string { return d.Format(time.DateOnly) }

	// 30 days before now is 2026-10-23 12:00: the 10-22 partition holds nothing younger, the
	// 10-23 one still does.
	old := time.Date(2026, 10, 22, 23, 59, 59, 0, time.UTC)
	edgeDay := time.Date(2026, 10, 23, 0, 0, 0, 0, time.UTC)
	db.Seed(t, []logs.Entry{
		{AppID: appID, Stream: logs.StreamStdout, Timestamp: old, Message: "old"},
		{AppID: appID, Stream: logs.StreamStdout, Timestamp: edgeDay.Add(13 * time.Hour), Message: "still kept by someone"},
	})

	// A plan keeping 45 days holds the old partition back.
	db.SavePlan(t, "long", 45)
	m := usecase.NewPartitions(db.Store, quiet, clock, 2, 30)
	if _, err := m.Upkeep(ctx); err != nil {
		t.Fatal(err)
	}
	if m.MaxDays() != 45 {
		t.Fatalf("longest retention %d, want the plan's 45", m.MaxDays())
	}
	got := partitionDays(t, db)
	want := []string{"2026-10-22", "2026-10-23", "2026-11-22", "2026-11-23", "2026-11-24"}
	if !slices.Equal(got, want) {
		t.Fatalf("partitions %v, want %v", got, want)
	}

	// Back to 30 days: the 10-22 partition goes whole, the 10-23 one stays.
	db.SavePlanVersion(t, logs.Plan{AccountID: "long", Name: "p", RetentionDays: 30, Version: 2})
	if dropped, err := m.Upkeep(ctx); err != nil || dropped != 1 {
		t.Fatalf("dropped %d, %v; want 1", dropped, err)
	}
	got = partitionDays(t, db)
	want = []string{day(edgeDay), "2026-11-22", "2026-11-23", "2026-11-24"}
	if !slices.Equal(got, want) || m.MaxDays() != 30 {
		t.Fatalf("partitions %v (max %d), want %v", got, m.MaxDays(), want)
	}
	if n := db.Count(t, appID); n != 1 {
		t.Fatalf("%d entries left, want the one in the kept partition", n)
	}

	// A day later the 10-23 partition is past the edge too, and the next day is made ahead.
	now = now.Add(24 * time.Hour)
	if _, err := m.Upkeep(ctx); err != nil {
		t.Fatal(err)
	}
	got = partitionDays(t, db)
	want = []string{"2026-11-22", "2026-11-23", "2026-11-24", "2026-11-25"}
	if !slices.Equal(got, want) {
		t.Fatalf("partitions %v, want %v", got, want)
	}
	// A dropped day can be created again on demand (a late line of a long-retention account).
	db.Seed(t, []logs.Entry{{AppID: appID, Stream: logs.StreamStdout, Timestamp: old, Message: "again"}})
}

func partitionDays(t *testing.T, db *logstest.DB) []string {
	t.Helper()
	days, err := db.Store.Partitions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(days))
	for i, d := range days {
		out[i] = d.Format(time.DateOnly)
	}
	return out
}
