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

// A zone's report moves the database only where the transition table allows, from its
// status; anything else (late, repeated, or about a database since asked to go) changes
// nothing and is no error, so the bus does not retry it. Only ready announces anything.
func TestZoneReportsMoveTheDatabaseThroughItsTable(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	const id = "01000000-0000-7000-8000-000000000001"
	for _, tc := range []struct {
		kind      string
		from      database.Status
		message   string
		want      database.Status
		wantMsg   string
		published []string
	}{
		{zonebus.KeyDatabaseReady, database.StatusProvisioning, "", database.StatusReady, "", []string{databasesbus.KeyDatabaseReady}},
		{zonebus.KeyDatabaseFailed, database.StatusProvisioning, "disk full", database.StatusFailed, "disk full", nil},
		{zonebus.KeyDatabaseFailed, database.StatusProvisioning, "", database.StatusFailed, "the database could not be created", nil},
		{zonebus.KeyDatabaseReadOnly, database.StatusReady, "1.1 MB of 1.0 MB", database.StatusReadOnly, "1.1 MB of 1.0 MB", nil},
		{zonebus.KeyDatabaseWritable, database.StatusReadOnly, "", database.StatusReady, "", nil},
		// Refused by the table: nothing moves.
		{zonebus.KeyDatabaseReady, database.StatusReadOnly, "", database.StatusReadOnly, "before", nil},
		{zonebus.KeyDatabaseReady, database.StatusDeleting, "", database.StatusDeleting, "before", nil},
		{zonebus.KeyDatabaseReady, database.StatusReady, "", database.StatusReady, "before", nil},
		{zonebus.KeyDatabaseFailed, database.StatusReady, "late", database.StatusReady, "before", nil},
		{zonebus.KeyDatabaseReadOnly, database.StatusProvisioning, "x", database.StatusProvisioning, "before", nil},
		{zonebus.KeyDatabaseReadOnly, database.StatusDeleting, "x", database.StatusDeleting, "before", nil},
		{zonebus.KeyDatabaseWritable, database.StatusReady, "", database.StatusReady, "before", nil},
		{zonebus.KeyDatabaseWritable, database.StatusFailed, "", database.StatusFailed, "before", nil},
	} {
		t.Run(string(tc.from)+"/"+tc.kind, func(t *testing.T) {
			m := &memory{dbs: map[string]database.Database{}, dumps: map[string]database.Dump{}}
			m.dbs[id] = database.Database{ID: id, AppID: "a", AccountID: "acct", Zone: "local", Status: tc.from, Message: "before", UpdatedAt: t0}
			s := NewDatabases(m, nil, nil, objectsOf{m}, func() time.Time { return now }, slog.New(slog.DiscardHandler))
			if err := s.ZoneReported(ctx, m, ZoneReport{Kind: tc.kind, DatabaseID: id, Zone: "local", Message: tc.message}); err != nil {
				t.Fatal(err)
			}
			d := m.dbs[id]
			if d.Status != tc.want || d.Message != tc.wantMsg {
				t.Fatalf("status %s message %q, want %s %q", d.Status, d.Message, tc.want, tc.wantMsg)
			}
			if moved := tc.want != tc.from; moved != d.UpdatedAt.Equal(now) {
				t.Fatalf("updated at %v (moved: %v)", d.UpdatedAt, moved)
			}
			if !slices.Equal(m.keys, tc.published) {
				t.Fatalf("published %v, want %v", m.keys, tc.published)
			}
		})
	}

	t.Run("another zone's report", func(t *testing.T) {
		m := &memory{dbs: map[string]database.Database{}, dumps: map[string]database.Dump{}}
		m.dbs[id] = database.Database{ID: id, AppID: "a", Zone: "local", Status: database.StatusProvisioning}
		s := NewDatabases(m, nil, nil, objectsOf{m}, func() time.Time { return now }, slog.New(slog.DiscardHandler))
		if err := s.ZoneReported(ctx, m, ZoneReport{Kind: zonebus.KeyDatabaseReady, DatabaseID: id, Zone: "other"}); err != nil {
			t.Fatal(err)
		}
		if m.dbs[id].Status != database.StatusProvisioning || len(m.keys) != 0 {
			t.Fatalf("another zone moved it: %+v, published %v", m.dbs[id], m.keys)
		}
	})
}
