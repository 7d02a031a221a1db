// Package database is the managed-database domain: a database's statuses, the transitions
// between them, and the sentinel errors the use cases return. No I/O.
package database

import (
	"errors"
	"time"

	"tori.dev/contract/names"
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

// Cause is what moves a database from one status to another: a zone's report or the
// customer's (or the app's) delete.
type Cause string

const (
	// Created: the zone made the database (zone.database.ready).
	Created Cause = "created"
	// CreateFailed: the zone could not make it (zone.database.failed).
	CreateFailed Cause = "create_failed"
	// OverCap: its size reached the plan's cap and the zone made it read-only
	// (zone.database.read_only).
	OverCap Cause = "over_cap"
	// UnderCap: its size fell under 90 % of the cap and the zone made it writable again
	// (zone.database.writable).
	UnderCap Cause = "under_cap"
	// DeleteAsked: the customer deleted the database, or its app was deleted.
	DeleteAsked Cause = "delete_asked"
)

// transitions is the state machine: where each status goes on each cause; a cause not listed
// for a status moves nothing (a late or repeated report, a ready after a delete was asked).
// A deleting database goes nowhere: its record is removed once the zone confirms the
// database is gone.
var transitions = map[Status]map[Cause]Status{
	StatusProvisioning: {Created: StatusReady, CreateFailed: StatusFailed, DeleteAsked: StatusDeleting},
	StatusReady:        {OverCap: StatusReadOnly, DeleteAsked: StatusDeleting},
	StatusReadOnly:     {UnderCap: StatusReady, DeleteAsked: StatusDeleting},
	StatusFailed:       {DeleteAsked: StatusDeleting},
	StatusDeleting:     nil,
}

// Next is where a database in from goes on cause, or an error wrapping ErrTransition.
func Next(from Status, cause Cause) (Status, error) {
	return next(transitions, from, cause)
}

// Apply moves d on cause at now, through the state machine: its status, its message (why it
// failed, or its usage and cap while read-only; empty otherwise) and its update time. On a
// refused move d is unchanged and the error wraps ErrTransition.
func (d *Database) Apply(cause Cause, now time.Time, message string) error {
	to, err := Next(d.Status, cause)
	if err != nil {
		return err
	}
	d.Status, d.UpdatedAt = to, now
	switch to {
	case StatusFailed:
		d.Message = message
		if d.Message == "" {
			d.Message = "the database could not be created"
		}
	case StatusReadOnly:
		d.Message = message
	case StatusReady:
		d.Message = ""
	}
	return nil
}

// Database is one app's managed database as the control plane records it. Its credentials
// are never here: only the zone and, sealed, the apps service ever hold them.
type Database struct {
	ID    string
	AppID string
	// AccountID is the owning team's id (a personal team's id is its account's, so the rows
	// made before teams need no change); plans and limits are the team's.
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

// NameFor is the database and role name on the zone cluster for a database id (the
// contract's names.DatabaseName: the id's hex, so it is a plain identifier and says nothing
// about the app or account); "" for an id that is not a canonical UUID.
func NameFor(id string) string {
	name, _ := names.DatabaseName(id)
	return name
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
	// ErrTransition: the database, a dump or a restore cannot move to the asked status from
	// where it is.
	ErrTransition = errors.New("invalid status transition")
	// ErrAppUnavailable: the apps service could not say whose app it is.
	ErrAppUnavailable = errors.New("apps service unavailable")
	// ErrZoneUnavailable: the database's zone did not answer about its dumps.
	ErrZoneUnavailable = errors.New("zone unavailable")
	// ErrPlanUnavailable: billing could not give the account's plan.
	ErrPlanUnavailable = errors.New("plan unavailable")
)
