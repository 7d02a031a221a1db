package usecase

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/databases/internal/database"
)

// DumpObjects are the dumps in their zone's bucket, reached through the zone: this service
// holds no object-store credentials (docs/conventions.md, "Dump objects").
type DumpObjects interface {
	// DownloadURL is a short-lived URL that downloads the dump without credentials;
	// database.ErrNotFound when the zone has no such object, database.ErrZoneUnavailable
	// when it does not answer.
	DownloadURL(ctx context.Context, zone, databaseID, dumpID string) (string, error)
	// Delete removes dumps from the zone's bucket; what is gone already counts as done.
	Delete(ctx context.Context, zone, databaseID string, dumpIDs []string) error
}

// Candidate is a database the nightly job may dump, with its newest dump's time.
type Candidate struct {
	Database database.Database
	LastDump time.Time
}

// live is the caller's app's database, when it may be dumped.
func (s *Databases) dumpable(ctx context.Context, accountID, slug string) (database.Database, error) {
	a, err := s.app(ctx, accountID, slug)
	if err != nil {
		return database.Database{}, err
	}
	d, err := s.store.ByApp(ctx, a.ID)
	if err != nil {
		return database.Database{}, err
	}
	if d.Status != database.StatusReady && d.Status != database.StatusReadOnly {
		return database.Database{}, database.ErrNotReady
	}
	return d, nil
}

// TakeDump starts a dump of the app's database now (it counts toward the seven kept). At most
// one runs per database: while one does, database.ErrDumpInProgress. The database's row is
// locked first, so two requests at once cannot both see none running.
func (s *Databases) TakeDump(ctx context.Context, accountID, slug string) (database.Dump, error) {
	d, err := s.dumpable(ctx, accountID, slug)
	if err != nil {
		return database.Dump{}, err
	}
	var out database.Dump
	err = s.store.InTx(ctx, func(tx Tx) error {
		if _, err := tx.LockByID(ctx, d.ID); err != nil {
			return err
		}
		dumps, err := tx.Dumps(ctx, d.ID)
		if err != nil {
			return err
		}
		if database.Running(dumps, s.now()) {
			return database.ErrDumpInProgress
		}
		out, err = s.startDump(ctx, tx, d)
		return err
	})
	return out, err
}

func (s *Databases) startDump(ctx context.Context, tx Tx, d database.Database) (database.Dump, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return database.Dump{}, err
	}
	dump := database.Dump{ID: id.String(), DatabaseID: d.ID, Status: database.DumpRunning,
		ObjectKey: database.DumpKey(d.ID, id.String()), CreatedAt: s.now().UTC()}
	if err := tx.InsertDump(ctx, dump); err != nil {
		return database.Dump{}, err
	}
	s.log.InfoContext(ctx, "dump requested", "database_id", d.ID, "dump_id", dump.ID)
	return dump, tx.Publish(ctx, zonebus.CommandKey(d.Zone, zonebus.CommandDatabaseDump), &zonev1.DumpDatabase{
		DatabaseId: d.ID, AppId: d.AppID, Name: d.Name, DumpId: dump.ID, ObjectKey: dump.ObjectKey,
	})
}

// ListDumps lists the app's database's dumps, newest first.
func (s *Databases) ListDumps(ctx context.Context, accountID, slug string) ([]database.Dump, error) {
	a, err := s.app(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	d, err := s.store.ByApp(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	return s.store.Dumps(ctx, d.ID)
}

// DumpURL is a short-lived URL that downloads a succeeded dump of the app's database from
// its zone's bucket. Only the owner's account gets one: another's dump is ErrNotFound.
func (s *Databases) DumpURL(ctx context.Context, accountID, slug, dumpID string) (string, error) {
	a, err := s.app(ctx, accountID, slug)
	if err != nil {
		return "", err
	}
	if id, err := uuid.Parse(dumpID); err != nil || id.String() != dumpID {
		return "", database.ErrNotFound
	}
	d, err := s.store.ByApp(ctx, a.ID)
	if err != nil {
		return "", err
	}
	dump, err := s.store.Dump(ctx, dumpID)
	if err != nil {
		return "", err
	}
	if dump.DatabaseID != d.ID || dump.Status != database.DumpSucceeded {
		return "", database.ErrNotFound
	}
	return s.objects.DownloadURL(ctx, d.Zone, d.ID, dump.ID)
}

// DumpReported records a zone's dump report and prunes the database's dumps, in tx.
func (s *Databases) DumpReported(ctx context.Context, tx Tx, zone, dumpID string, ok bool, size int64) error {
	dump, err := tx.LockDump(ctx, dumpID)
	if errors.Is(err, database.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	d, err := tx.LockByID(ctx, dump.DatabaseID)
	if err != nil {
		return err
	}
	if d.Zone != zone {
		return nil
	}
	cause := database.NotDumped
	if ok {
		cause = database.Dumped
	}
	// A report about a dump that already ended (redelivered, or late) moves nothing and is
	// no error, so the bus does not retry it.
	if err := dump.Apply(cause, size); err != nil {
		if errors.Is(err, database.ErrTransition) {
			return nil
		}
		return err
	}
	if err := tx.FinishDump(ctx, dump, s.now().UTC()); err != nil {
		return err
	}
	all, err := tx.Dumps(ctx, d.ID)
	if err != nil {
		return err
	}
	gone := database.Pruned(all)
	if len(gone) == 0 {
		return nil
	}
	ids := make([]string, 0, len(gone))
	var objects []string
	for _, g := range gone {
		ids = append(ids, g.ID)
		if g.Status == database.DumpSucceeded {
			objects = append(objects, g.ID)
		}
	}
	// The zone deletes the objects before the records go: if this transaction fails, the
	// report comes again and the zone's delete, done already, succeeds again.
	if len(objects) > 0 {
		if err := s.objects.Delete(ctx, zone, d.ID, objects); err != nil {
			return err
		}
	}
	s.log.InfoContext(ctx, "dumps pruned", "database_id", d.ID, "count", len(ids))
	return tx.DeleteDumps(ctx, ids)
}

// NightlyDumps starts the nightly dump of every database due for one (from DumpHour UTC on,
// once a day). It returns how many it started.
func (s *Databases) NightlyDumps(ctx context.Context) (int64, error) {
	cands, err := s.store.NightlyCandidates(ctx)
	if err != nil {
		return 0, err
	}
	now := s.now()
	var n int64
	for _, c := range cands {
		if !database.DueNightly(now, c.LastDump, s.DumpHour) {
			continue
		}
		if err := s.store.InTx(ctx, func(tx Tx) error {
			_, err := s.startDump(ctx, tx, c.Database)
			return err
		}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
