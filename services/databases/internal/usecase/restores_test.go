package usecase

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	databasesbus "tori.dev/proto/tori/databases/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/databases/internal/database"
)

// A restore moves only where its transition table allows: the zone's report ends a restoring
// one (ready announced, failed with the zone's reason), a delete marks any but a deleting one
// deleting and asks the zone to drop it, and whatever the table refuses (a redelivered
// report, a report after the delete, a second delete) changes nothing and is no error.
func TestRestoreReportsAndDeletesGoThroughTheTable(t *testing.T) {
	const (
		dbID      = "01000000-0000-7000-8000-000000000001"
		restoreID = "01000000-0000-7000-8000-0000000000a1"
	)
	drop := zonebus.CommandKey("local", zonebus.CommandDatabaseDrop)
	for _, tc := range []struct {
		name      string
		from      database.RestoreStatus
		act       func(*Databases) error
		want      database.RestoreStatus
		wantMsg   string
		published []string
	}{
		{"restored", database.RestoreRestoring, reported(true, ""), database.RestoreReady, "", []string{databasesbus.KeyRestoreReady}},
		{"not restored", database.RestoreRestoring, reported(false, "bad dump"), database.RestoreFailed, "bad dump", nil},
		{"delete while restoring", database.RestoreRestoring, deleted, database.RestoreDeleting, "", []string{drop}},
		{"delete once ready", database.RestoreReady, deleted, database.RestoreDeleting, "", []string{drop}},
		{"delete once failed", database.RestoreFailed, deleted, database.RestoreDeleting, "", []string{drop}},
		{"its database deleted", database.RestoreReady, databaseDeleted, database.RestoreDeleting, "", []string{drop, drop}},
		// Refused by the table: nothing moves, nothing is said.
		{"a redelivered report", database.RestoreReady, reported(true, ""), database.RestoreReady, "", nil},
		{"a late failure", database.RestoreReady, reported(false, "late"), database.RestoreReady, "", nil},
		{"a report after the delete", database.RestoreDeleting, reported(true, ""), database.RestoreDeleting, "", nil},
		{"a second delete", database.RestoreDeleting, deleted, database.RestoreDeleting, "", nil},
		{"its database deleted after it", database.RestoreDeleting, databaseDeleted, database.RestoreDeleting, "", []string{drop}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &memory{dbs: map[string]database.Database{}, dumps: map[string]database.Dump{}, restores: map[string]database.Restore{}}
			m.dbs[dbID] = database.Database{ID: dbID, AppID: "a", AccountID: "acct", Zone: "local", Name: "db_x", Status: database.StatusReady}
			m.restores[restoreID] = database.Restore{ID: restoreID, DatabaseID: dbID, Name: "db_r", Status: tc.from}
			apps := oneApp{App{ID: "a", AccountID: "acct", Slug: "shop"}}
			now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
			s := NewDatabases(m, apps, nil, objectsOf{m}, func() time.Time { return now }, slog.New(slog.DiscardHandler))
			if err := tc.act(s); err != nil {
				t.Fatal(err)
			}
			r := m.restores[restoreID]
			if r.Status != tc.want || r.Message != tc.wantMsg {
				t.Fatalf("status %s message %q, want %s %q", r.Status, r.Message, tc.want, tc.wantMsg)
			}
			if !slices.Equal(m.keys, tc.published) {
				t.Fatalf("published %v, want %v", m.keys, tc.published)
			}
		})
	}
}

func reported(ok bool, message string) func(*Databases) error {
	return func(s *Databases) error {
		m := s.store.(*memory)
		return s.RestoreReported(context.Background(), m, "local", "01000000-0000-7000-8000-0000000000a1", ok, message)
	}
}

func deleted(s *Databases) error {
	_, err := s.DeleteRestore(context.Background(), "acct", "shop", "01000000-0000-7000-8000-0000000000a1")
	return err
}

// databaseDeleted is the restore's database deleted by its customer: its restores go with it.
func databaseDeleted(s *Databases) error {
	_, err := s.Delete(context.Background(), "acct", "shop")
	return err
}

// A dump's report ends a running dump once; a report about an ended one (redelivered, or
// the other way round) changes nothing and is no error.
func TestDumpReportsGoThroughTheTable(t *testing.T) {
	ctx := context.Background()
	const dbID, dumpID = "01000000-0000-7000-8000-000000000001", "01000000-0000-7000-8000-0000000000d1"
	for _, tc := range []struct {
		from     database.DumpStatus
		ok       bool
		want     database.DumpStatus
		wantSize int64
	}{
		{database.DumpRunning, true, database.DumpSucceeded, 4096},
		{database.DumpRunning, false, database.DumpFailed, 0},
		{database.DumpSucceeded, false, database.DumpSucceeded, 7},
		{database.DumpSucceeded, true, database.DumpSucceeded, 7},
		{database.DumpFailed, true, database.DumpFailed, 7},
	} {
		t.Run(string(tc.from), func(t *testing.T) {
			m := &memory{dbs: map[string]database.Database{}, dumps: map[string]database.Dump{}}
			m.dbs[dbID] = database.Database{ID: dbID, AppID: "a", Zone: "local", Status: database.StatusReady}
			m.dumps[dumpID] = database.Dump{ID: dumpID, DatabaseID: dbID, Status: tc.from, SizeBytes: 7}
			s := NewDatabases(m, nil, nil, objectsOf{m}, time.Now, slog.New(slog.DiscardHandler))
			if err := s.DumpReported(ctx, m, "local", dumpID, tc.ok, 4096); err != nil {
				t.Fatal(err)
			}
			if d := m.dumps[dumpID]; d.Status != tc.want || d.SizeBytes != tc.wantSize {
				t.Fatalf("%s of %d bytes, want %s of %d", d.Status, d.SizeBytes, tc.want, tc.wantSize)
			}
		})
	}
}
