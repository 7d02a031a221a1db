package usecase

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"tori.dev/services/databases/internal/database"
)

// At most one dump runs per database: a second manual one while the first runs is
// ErrDumpInProgress and sends the zone nothing; once the first is reported, the next may
// start; a running dump the zone never reported stops blocking after DumpBlocksFor.
func TestOneManualDumpAtATime(t *testing.T) {
	m := &memory{dbs: map[string]database.Database{}, dumps: map[string]database.Dump{}}
	db := database.Database{ID: "01000000-0000-7000-8000-000000000002", AppID: "app-1", Zone: "local", Name: "db_y", Status: database.StatusReady}
	m.dbs[db.ID] = db
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	apps := oneApp{App{ID: "app-1", AccountID: "acct-1", Slug: "blue", Kind: "service", Zone: "local"}}
	s := NewDatabases(m, apps, nil, objectsOf{m}, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	ctx := context.Background()

	first, err := s.TakeDump(ctx, "acct-1", "blue")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.TakeDump(ctx, "acct-1", "blue"); !errors.Is(err, database.ErrDumpInProgress) {
			t.Fatalf("second dump while the first runs: %v, want ErrDumpInProgress", err)
		}
	}
	if len(m.commands) != 1 {
		t.Fatalf("%d dump commands sent, want 1", len(m.commands))
	}
	if err := s.DumpReported(ctx, m, "local", first.ID, true, 10); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	second, err := s.TakeDump(ctx, "acct-1", "blue")
	if err != nil {
		t.Fatalf("after the first finished: %v", err)
	}
	// The zone never reports the second: it stops blocking after DumpBlocksFor.
	now = second.CreatedAt.Add(database.DumpBlocksFor - time.Second)
	if _, err := s.TakeDump(ctx, "acct-1", "blue"); !errors.Is(err, database.ErrDumpInProgress) {
		t.Fatalf("inside the hour: %v", err)
	}
	now = second.CreatedAt.Add(database.DumpBlocksFor)
	if _, err := s.TakeDump(ctx, "acct-1", "blue"); err != nil {
		t.Fatalf("a dump never reported still blocks after %s: %v", database.DumpBlocksFor, err)
	}
}
