package database

import (
	"errors"
	"time"
)

// RestoreStatus is where a restore is: restoring → ready or failed; deleting once asked to go.
type RestoreStatus string

const (
	RestoreRestoring RestoreStatus = "restoring"
	RestoreReady     RestoreStatus = "ready"
	RestoreFailed    RestoreStatus = "failed"
	RestoreDeleting  RestoreStatus = "deleting"
)

// Restore is a dump restored into a database of its own; the live database and its
// DATABASE_URL are never touched.
type Restore struct {
	ID         string
	DatabaseID string
	DumpID     string
	Name       string // the restore's database and role on the zone
	Status     RestoreStatus
	Message    string
	CreatedAt  time.Time
}

var (
	// ErrRestoreExists: one restore at a time.
	ErrRestoreExists = errors.New("restore_exists")
	// ErrBadDump: the dump named is not a succeeded dump of this database.
	ErrBadDump = errors.New("invalid_dump")
)
