package database

import (
	"errors"
	"sort"
	"time"
)

// DumpStatus is where a dump is.
type DumpStatus string

const (
	DumpRunning   DumpStatus = "running"
	DumpSucceeded DumpStatus = "succeeded"
	DumpFailed    DumpStatus = "failed"
)

// DumpCause is what ends a running dump: its zone's report (zone.database.dumped).
type DumpCause string

const (
	// Dumped: the zone wrote the dump to its bucket.
	Dumped DumpCause = "dumped"
	// NotDumped: the zone could not take the dump.
	NotDumped DumpCause = "not_dumped"
)

// dumpTransitions is a dump's state machine: a running dump ends once, either way; a report
// about an ended one (late or redelivered) moves nothing.
var dumpTransitions = map[DumpStatus]map[DumpCause]DumpStatus{
	DumpRunning:   {Dumped: DumpSucceeded, NotDumped: DumpFailed},
	DumpSucceeded: nil,
	DumpFailed:    nil,
}

// NextDump is where a dump in from goes on cause, or an error wrapping ErrTransition.
func NextDump(from DumpStatus, cause DumpCause) (DumpStatus, error) {
	return next(dumpTransitions, from, cause)
}

// Apply moves d on cause through its state machine: its status, and its size (what the zone
// wrote when it succeeded, nothing when it failed). On a refused move d is unchanged and the
// error wraps ErrTransition.
func (d *Dump) Apply(cause DumpCause, size int64) error {
	to, err := NextDump(d.Status, cause)
	if err != nil {
		return err
	}
	d.Status, d.SizeBytes = to, 0
	if to == DumpSucceeded {
		d.SizeBytes = size
	}
	return nil
}

// KeepDumps is how many succeeded dumps a database keeps (decisions.md).
const KeepDumps = 7

// Dump is one dump of a database.
type Dump struct {
	ID         string
	DatabaseID string
	Status     DumpStatus
	SizeBytes  int64
	ObjectKey  string
	CreatedAt  time.Time
}

// DumpKey is a dump's object key.
func DumpKey(databaseID, dumpID string) string { return "dumps/" + databaseID + "/" + dumpID + ".dump" }

// Pruned is what goes once a dump finished: the succeeded ones past the newest KeepDumps,
// and the failed ones older than the oldest succeeded one kept. A failed dump never counts,
// so it never displaces a good one; running ones are left alone.
func Pruned(dumps []Dump) []Dump {
	sorted := append([]Dump(nil), dumps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].CreatedAt.After(sorted[j].CreatedAt) })
	var out []Dump
	good := 0
	var oldestKept time.Time
	for _, d := range sorted {
		if d.Status != DumpSucceeded {
			continue
		}
		good++
		if good <= KeepDumps {
			oldestKept = d.CreatedAt
			continue
		}
		out = append(out, d)
	}
	if good >= KeepDumps {
		for _, d := range sorted {
			if d.Status == DumpFailed && d.CreatedAt.Before(oldestKept) {
				out = append(out, d)
			}
		}
	}
	return out
}

// DueNightly reports whether a database last dumped at last (zero: never) is due for its
// nightly dump at now, with the nightly dumps taken from hour (UTC) on.
func DueNightly(now, last time.Time, hour int) bool {
	now = now.UTC()
	start := time.Date(now.Year(), now.Month(), now.Day(), hour, 0, 0, 0, time.UTC)
	return !now.Before(start) && last.Before(start)
}

// ErrNotReady: the database cannot be dumped in its status (not yet made, or going).
var ErrNotReady = errors.New("database_not_ready")

// ErrDumpInProgress: a dump of the database is running; a manual one waits for it to end.
var ErrDumpInProgress = errors.New("dump_in_progress")

// DumpBlocksFor is how long a running dump keeps another manual one from starting. A zone
// that never reports (it died mid-dump) would otherwise block the database's dumps forever;
// a dump of a database within the plans' sizes ends well inside it.
const DumpBlocksFor = time.Hour

// Running reports whether any of dumps is running at now (started less than DumpBlocksFor
// ago and not reported).
func Running(dumps []Dump, now time.Time) bool {
	for _, d := range dumps {
		if d.Status == DumpRunning && now.Sub(d.CreatedAt) < DumpBlocksFor {
			return true
		}
	}
	return false
}
