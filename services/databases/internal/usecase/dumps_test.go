package usecase

import (
	"context"
	"log/slog"
	"sort"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/databases/internal/database"
)

// memory is an in-memory Store and Tx: the nightly job and the dump reports run against it
// on a clock the test moves.
type memory struct {
	dbs      map[string]database.Database
	dumps    map[string]database.Dump
	commands []*zonev1.DumpDatabase
	removed  []string
	// rotations_test.go: the pending rotations, the deploys noted for them, and every
	// routing key published.
	rotations       map[string]database.Rotation
	rotationDeploys map[string]string
	keys            []string
	restores        map[string]database.Restore
}

func (m *memory) ByApp(_ context.Context, appID string) (database.Database, error) {
	for _, d := range m.dbs {
		if d.AppID == appID {
			return d, nil
		}
	}
	return database.Database{}, database.ErrNotFound
}
func (m *memory) Dumps(_ context.Context, databaseID string) ([]database.Dump, error) {
	var out []database.Dump
	for _, d := range m.dumps {
		if d.DatabaseID == databaseID {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, nil
}
func (m *memory) Dump(_ context.Context, id string) (database.Dump, error) {
	d, ok := m.dumps[id]
	if !ok {
		return database.Dump{}, database.ErrNotFound
	}
	return d, nil
}
func (m *memory) NightlyCandidates(ctx context.Context) ([]Candidate, error) {
	var out []Candidate
	for _, d := range m.dbs {
		ds, _ := m.Dumps(ctx, d.ID)
		c := Candidate{Database: d}
		if len(ds) > 0 {
			c.LastDump = ds[0].CreatedAt
		}
		out = append(out, c)
	}
	return out, nil
}
func (m *memory) InTx(_ context.Context, fn func(Tx) error) error { return fn(m) }
func (m *memory) Insert(_ context.Context, d database.Database) error {
	m.dbs[d.ID] = d
	return nil
}
func (m *memory) LockByApp(ctx context.Context, appID string) (database.Database, error) {
	return m.ByApp(ctx, appID)
}
func (m *memory) LockByAccount(context.Context, string) ([]database.Database, error) { return nil, nil }
func (m *memory) LockByID(_ context.Context, id string) (database.Database, error) {
	d, ok := m.dbs[id]
	if !ok {
		return database.Database{}, database.ErrNotFound
	}
	return d, nil
}
func (m *memory) Update(_ context.Context, d database.Database) error { m.dbs[d.ID] = d; return nil }
func (m *memory) Remove(_ context.Context, id string) error           { delete(m.dbs, id); return nil }
func (m *memory) InsertDump(_ context.Context, d database.Dump) error {
	m.dumps[d.ID] = d
	return nil
}
func (m *memory) LockDump(ctx context.Context, id string) (database.Dump, error) {
	return m.Dump(ctx, id)
}
func (m *memory) FinishDump(_ context.Context, d database.Dump, _ time.Time) error {
	m.dumps[d.ID] = d
	return nil
}
func (m *memory) DeleteDumps(_ context.Context, ids []string) error {
	for _, id := range ids {
		delete(m.dumps, id)
	}
	return nil
}
func (m *memory) Publish(_ context.Context, key string, msg proto.Message) error {
	m.keys = append(m.keys, key)
	if c, ok := msg.(*zonev1.DumpDatabase); ok {
		m.commands = append(m.commands, c)
	}
	return nil
}

// objectsOf records in m the dumps the zone was asked to delete, as "zone/database/dump"
// (the zone's side runs against the real S3 server in the zone agent's tests).
type objectsOf struct{ m *memory }

func (o objectsOf) DownloadURL(context.Context, string, string, string) (string, error) {
	return "", database.ErrNotFound
}
func (o objectsOf) Delete(_ context.Context, zone, databaseID string, dumpIDs []string) error {
	for _, id := range dumpIDs {
		o.m.removed = append(o.m.removed, zone+"/"+databaseID+"/"+id)
	}
	return nil
}

// Nine nights on a clock the test moves: one dump a night from 03:00 UTC and none before,
// the fifth failing; seven good dumps kept, the failed one listed, and the oldest good one
// gone with its object.
func TestNightlyDumpsKeepSevenGood(t *testing.T) {
	m := &memory{dbs: map[string]database.Database{}, dumps: map[string]database.Dump{}}
	db := database.Database{ID: "01000000-0000-7000-8000-000000000001", AppID: "a", Zone: "local", Name: "db_x", Status: database.StatusReady}
	m.dbs[db.ID] = db
	now := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	s := NewDatabases(m, nil, nil, objectsOf{m}, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	s.DumpHour = 3
	ctx := context.Background()

	for night := 1; night <= 9; night++ {
		now = time.Date(2026, 11, night, 2, 59, 0, 0, time.UTC)
		if n, err := s.NightlyDumps(ctx); err != nil || n != 0 {
			t.Fatalf("night %d before the hour: %d dumps (%v)", night, n, err)
		}
		now = time.Date(2026, 11, night, 3, 0, 30, 0, time.UTC)
		if n, err := s.NightlyDumps(ctx); err != nil || n != 1 {
			t.Fatalf("night %d at the hour: %d dumps (%v)", night, n, err)
		}
		now = now.Add(time.Minute)
		if n, err := s.NightlyDumps(ctx); err != nil || n != 0 {
			t.Fatalf("night %d, a minute later: %d dumps (%v)", night, n, err)
		}
		c := m.commands[len(m.commands)-1]
		if err := s.DumpReported(ctx, m, "local", c.GetDumpId(), night != 5, 100); err != nil {
			t.Fatal(err)
		}
	}
	list, _ := m.Dumps(ctx, db.ID)
	var good, failed int
	for _, d := range list {
		switch d.Status {
		case database.DumpSucceeded:
			good++
		case database.DumpFailed:
			failed++
		}
	}
	if good != 7 || failed != 1 {
		t.Fatalf("%d good and %d failed dumps kept, want 7 and 1", good, failed)
	}
	// Eight good dumps: night 1's went, its object deleted by its zone (night 5's failure
	// counted for nothing).
	if len(m.removed) != 1 || m.removed[0] != "local/"+db.ID+"/"+m.commands[0].GetDumpId() {
		t.Fatalf("removed %v", m.removed)
	}
	// A report from another zone, or a second report, changes nothing.
	now = time.Date(2026, 11, 10, 3, 0, 0, 0, time.UTC)
	if _, err := s.NightlyDumps(ctx); err != nil {
		t.Fatal(err)
	}
	last := m.commands[len(m.commands)-1].GetDumpId()
	if err := s.DumpReported(ctx, m, "other", last, true, 1); err != nil || m.dumps[last].Status != database.DumpRunning {
		t.Fatalf("a report from another zone: %v %v", m.dumps[last].Status, err)
	}
}

// The restores, for restores_test.go; a test that sets none has none.
func (m *memory) InsertRestore(_ context.Context, r database.Restore) error {
	if m.restores == nil {
		m.restores = map[string]database.Restore{}
	}
	m.restores[r.ID] = r
	return nil
}
func (m *memory) LockRestore(_ context.Context, id string) (database.Restore, error) {
	r, ok := m.restores[id]
	if !ok {
		return database.Restore{}, database.ErrNotFound
	}
	return r, nil
}
func (m *memory) UpdateRestore(ctx context.Context, r database.Restore) error {
	return m.InsertRestore(ctx, r)
}
func (m *memory) RemoveRestore(_ context.Context, id string) error {
	delete(m.restores, id)
	return nil
}
func (m *memory) Restores(_ context.Context, databaseID string) ([]database.Restore, error) {
	var out []database.Restore
	for _, r := range m.restores {
		if r.DatabaseID == databaseID {
			out = append(out, r)
		}
	}
	return out, nil
}
