package usecase

import (
	"context"
	"log/slog"
	"testing"
	"time"

	databasesbus "tori.dev/proto/tori/databases/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/databases/internal/database"
)

func (m *memory) PutRotation(_ context.Context, r database.Rotation) error {
	if m.rotations == nil {
		m.rotations, m.rotationDeploys = map[string]database.Rotation{}, map[string]string{}
	}
	for dep, db := range m.rotationDeploys {
		if db == r.DatabaseID {
			delete(m.rotationDeploys, dep)
		}
	}
	m.rotations[r.DatabaseID] = r
	return nil
}
func (m *memory) LockRotation(_ context.Context, id string) (database.Rotation, error) {
	r, ok := m.rotations[id]
	if !ok {
		return database.Rotation{}, database.ErrNotFound
	}
	return r, nil
}
func (m *memory) LockRotationByApp(_ context.Context, appID string) (database.Rotation, error) {
	for _, r := range m.rotations {
		if r.AppID == appID {
			return r, nil
		}
	}
	return database.Rotation{}, database.ErrNotFound
}
func (m *memory) LockRotationOfDeploy(ctx context.Context, deployID string) (database.Rotation, error) {
	db, ok := m.rotationDeploys[deployID]
	if !ok {
		return database.Rotation{}, database.ErrNotFound
	}
	return m.LockRotation(ctx, db)
}
func (m *memory) ConfirmRotation(_ context.Context, id string, at time.Time) error {
	if r, ok := m.rotations[id]; ok {
		r.RotatedAt = at
		m.rotations[id] = r
	}
	return nil
}
func (m *memory) AddRotationDeploy(_ context.Context, id, deployID string) error {
	m.rotationDeploys[deployID] = id
	return nil
}
func (m *memory) RemoveRotation(_ context.Context, id string) error {
	delete(m.rotations, id)
	for dep, db := range m.rotationDeploys {
		if db == id {
			delete(m.rotationDeploys, dep)
		}
	}
	return nil
}
func (m *memory) ConfirmedRotations(context.Context) ([]database.Rotation, error) {
	var out []database.Rotation
	for _, r := range m.rotations {
		if r.Confirmed() {
			out = append(out, r)
		}
	}
	return out, nil
}

type oneApp struct{ a App }

func (o oneApp) LookupApp(_ context.Context, accountID, slug string) (App, bool, error) {
	return o.a, o.a.AccountID == accountID && o.a.Slug == slug, nil
}

func (m *memory) count(key string) int {
	n := 0
	for _, k := range m.keys {
		if k == key {
			n++
		}
	}
	return n
}

// The rule end to end on a clock the test moves: the zone's confirmation starts the 24
// hours and tells the apps service; a deploy made before it, or a rollback, going live
// retires nothing; the next deploy made after it does, once; without a deploy, the job
// retires it when the 24 hours are up and not a second before.
func TestRotationRetiresOnNextDeployOrAfter24Hours(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	a := App{ID: "02000000-0000-7000-8000-000000000001", AccountID: "acct", Slug: "web", Kind: "service", Zone: "local"}
	retire := zonebus.CommandKey("local", zonebus.CommandDatabaseRetire)
	newDB := func() (*memory, *Databases, database.Database) {
		m := &memory{dbs: map[string]database.Database{}, dumps: map[string]database.Dump{}}
		db := database.Database{ID: "01000000-0000-7000-8000-000000000001", AppID: a.ID, AccountID: "acct", Zone: "local", Name: "db_x", Status: database.StatusReady}
		m.dbs[db.ID] = db
		return m, NewDatabases(m, oneApp{a}, nil, objectsOf{m}, func() time.Time { return now }, slog.New(slog.DiscardHandler)), db
	}

	t.Run("the next deploy", func(t *testing.T) {
		m, s, db := newDB()
		if _, err := s.RotateCredentials(ctx, "acct", "web"); err != nil {
			t.Fatal(err)
		}
		if m.count(zonebus.CommandKey("local", zonebus.CommandDatabaseRotate)) != 1 {
			t.Fatalf("published %v", m.keys)
		}
		// Made while the zone had not confirmed: its snapshot has the old URL.
		if err := s.DeployCreated(ctx, m, a.ID, "d-before", now, false); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		if err := s.ZoneReported(ctx, m, ZoneReport{Kind: zonebus.KeyDatabaseRotated, DatabaseID: db.ID, Zone: "local"}); err != nil {
			t.Fatal(err)
		}
		if m.count(databasesbus.KeyDatabaseRotated) != 1 {
			t.Fatalf("the apps service was not told: %v", m.keys)
		}
		now = now.Add(time.Minute)
		for _, dep := range []struct {
			id       string
			rollback bool
		}{{"d-rollback", true}, {"d-next", false}} {
			if err := s.DeployCreated(ctx, m, a.ID, dep.id, now, dep.rollback); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []string{"d-before", "d-rollback"} {
			if err := s.DeployLive(ctx, m, id); err != nil || m.count(retire) != 0 {
				t.Fatalf("%s live retired the old password (%v)", id, err)
			}
		}
		if err := s.DeployLive(ctx, m, "d-next"); err != nil || m.count(retire) != 1 {
			t.Fatalf("the next deploy live: %d retire commands (%v)", m.count(retire), err)
		}
		// Done: neither the same deploy again nor the 24 hours retire anything more.
		now = now.Add(48 * time.Hour)
		if err := s.DeployLive(ctx, m, "d-next"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ExpireRotations(ctx); err != nil || m.count(retire) != 1 {
			t.Fatalf("%d retire commands after it was done (%v)", m.count(retire), err)
		}
	})

	t.Run("24 hours", func(t *testing.T) {
		m, s, db := newDB()
		if _, err := s.RotateCredentials(ctx, "acct", "web"); err != nil {
			t.Fatal(err)
		}
		rotatedAt := now
		if err := s.ZoneReported(ctx, m, ZoneReport{Kind: zonebus.KeyDatabaseRotated, DatabaseID: db.ID, Zone: "local"}); err != nil {
			t.Fatal(err)
		}
		now = rotatedAt.Add(database.OldPasswordLifetime - time.Second)
		if _, err := s.ExpireRotations(ctx); err != nil || m.count(retire) != 0 {
			t.Fatalf("retired a second early (%v)", err)
		}
		now = rotatedAt.Add(database.OldPasswordLifetime)
		if _, err := s.ExpireRotations(ctx); err != nil || m.count(retire) != 1 {
			t.Fatalf("after 24 hours: %d retire commands (%v)", m.count(retire), err)
		}
		if _, err := s.ExpireRotations(ctx); err != nil || m.count(retire) != 1 {
			t.Fatalf("a second run: %d retire commands (%v)", m.count(retire), err)
		}
	})

	t.Run("not ready", func(t *testing.T) {
		for _, st := range []database.Status{database.StatusProvisioning, database.StatusDeleting, database.StatusFailed} {
			m, s, db := newDB()
			db.Status = st
			m.dbs[db.ID] = db
			if _, err := s.RotateCredentials(ctx, "acct", "web"); err != database.ErrNotReady || len(m.keys) != 0 {
				t.Fatalf("%s: %v, published %v", st, err, m.keys)
			}
		}
		_, s, _ := newDB()
		if _, err := s.RotateCredentials(ctx, "other", "web"); err != database.ErrNotFound {
			t.Fatalf("another account's app: %v", err)
		}
	})
}
