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

// RestoreCause is what moves a restore: its zone's report (zone.database.restored) or the
// customer's delete (or its database's).
type RestoreCause string

const (
	// Restored: the zone restored the dump into the restore's database.
	Restored RestoreCause = "restored"
	// NotRestored: the zone could not restore it.
	NotRestored RestoreCause = "not_restored"
	// RestoreDeleteAsked: the customer deleted the restore, or its database is going.
	RestoreDeleteAsked RestoreCause = "delete_asked"
)

// restoreTransitions is a restore's state machine. A deleting restore goes nowhere: its
// record is removed once the zone confirms its database is dropped.
var restoreTransitions = map[RestoreStatus]map[RestoreCause]RestoreStatus{
	RestoreRestoring: {Restored: RestoreReady, NotRestored: RestoreFailed, RestoreDeleteAsked: RestoreDeleting},
	RestoreReady:     {RestoreDeleteAsked: RestoreDeleting},
	RestoreFailed:    {RestoreDeleteAsked: RestoreDeleting},
	RestoreDeleting:  nil,
}

// NextRestore is where a restore in from goes on cause, or an error wrapping ErrTransition.
func NextRestore(from RestoreStatus, cause RestoreCause) (RestoreStatus, error) {
	return next(restoreTransitions, from, cause)
}

// Apply moves r on cause through its state machine; message is why it failed, kept only on
// that move. On a refused move r is unchanged and the error wraps ErrTransition.
func (r *Restore) Apply(cause RestoreCause, message string) error {
	to, err := NextRestore(r.Status, cause)
	if err != nil {
		return err
	}
	r.Status = to
	if to == RestoreFailed {
		r.Message = message
	}
	return nil
}

var (
	// ErrRestoreExists: one restore at a time.
	ErrRestoreExists = errors.New("restore_exists")
	// ErrBadDump: the dump named is not a succeeded dump of this database.
	ErrBadDump = errors.New("invalid_dump")
)
