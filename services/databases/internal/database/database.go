// Package database is the managed-database domain: a database's statuses, the transitions
// between them, and the sentinel errors the use cases return. No I/O.
package database

import (
	"errors"
	"fmt"
	"time"
)

// Status is where a managed database is in its life (decisions.md, "Managed database").
type Status string

const (
	StatusProvisioning Status = "provisioning"
	StatusReady        Status = "ready"
	StatusReadOnly     Status = "read_only"
	StatusDeleting     Status = "deleting"
	StatusFailed       Status = "failed"
)

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusProvisioning, StatusReady, StatusReadOnly, StatusDeleting, StatusFailed:
		return true
	}
	return false
}

// transitions lists where each status may go. A deleting database goes nowhere: its record
// is removed once the zone confirms the database is gone.
var transitions = map[Status][]Status{
	StatusProvisioning: {StatusReady, StatusFailed, StatusDeleting},
	StatusReady:        {StatusReadOnly, StatusDeleting},
	StatusReadOnly:     {StatusReady, StatusDeleting},
	StatusFailed:       {StatusDeleting},
	StatusDeleting:     nil,
}

// CanMove reports whether a database in from may move to to.
func CanMove(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Move returns to when from may go there, else an error wrapping ErrTransition.
func Move(from, to Status) (Status, error) {
	if !CanMove(from, to) {
		return from, fmt.Errorf("%w: %s → %s", ErrTransition, from, to)
	}
	return to, nil
}

// Database is one app's managed database as the control plane records it. Its credentials
// are never here: only the zone and, sealed, the apps service ever hold them.
type Database struct {
	ID        string
	AppID     string
	AccountID string
	Zone      string
	Status    Status
	// Message is a human sentence or empty (for failed: why; for read_only: usage and cap).
	Message string
	Limits  Limits
	// Name is the database's (and its role's) name on the zone's cluster.
	Name string
	// AppDeleted: the app was deleted, and the database goes with it.
	AppDeleted bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Limits are the plan's bounds on one database, and the plan version they came from.
type Limits struct {
	Connections int
	MaxBytes    int64
	Version     int64
}

// Follows reports whether a plan change of version v replaces limits of a database in
// status s: a newer plan, for a database that still lives.
func (l Limits) Follows(v int64, s Status) bool {
	return v > l.Version && s != StatusDeleting && s != StatusFailed
}

// NameFor is the database and role name on the zone cluster for a database id: the id's hex,
// so it is a plain identifier and says nothing about the app or account.
func NameFor(id string) string {
	out := make([]byte, 0, 35)
	out = append(out, "db_"...)
	for i := 0; i < len(id); i++ {
		if id[i] != '-' {
			out = append(out, id[i])
		}
	}
	return string(out)
}

// Sentinel errors; internal/httpapi/errors.go maps each to its answer.
var (
	// ErrNotFound: no such app for the caller (unknown, another account's, deleted) or the
	// app has no database.
	ErrNotFound = errors.New("not found")
	// ErrServiceOnly: a static app runs nothing, so it gets no database.
	ErrServiceOnly = errors.New("service_only")
	// ErrExists: the app already has its one database.
	ErrExists = errors.New("database_exists")
	// ErrTransition: the database cannot move to the asked status from where it is.
	ErrTransition = errors.New("invalid status transition")
	// ErrAppUnavailable: the apps service could not say whose app it is.
	ErrAppUnavailable = errors.New("apps service unavailable")
	// ErrPlanUnavailable: billing could not give the account's plan.
	ErrPlanUnavailable = errors.New("plan unavailable")
)
