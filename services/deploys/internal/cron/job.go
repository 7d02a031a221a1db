package cron

import (
	"errors"
	"fmt"
	"time"

	"tori.dev/contract/names"
)

// Policy is what a tick does while an earlier run of the job is pending or running.
type Policy string

const (
	Forbid  Policy = "forbid"  // the tick is skipped (overlap)
	Replace Policy = "replace" // the running one is cancelled, then the tick runs
	Allow   Policy = "allow"   // the tick runs alongside
)

// MaxCommandBytes bounds a job's command.
const MaxCommandBytes = 4096

// FieldError is a job field the caller got wrong; Limit is set when a plan bound it.
type FieldError struct {
	Field, Reason string
	Limit         *int64
}

func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

// Unwrap makes every FieldError an ErrInvalidJob.
func (e *FieldError) Unwrap() error { return ErrInvalidJob }

// ErrInvalidJob is wrapped by every FieldError.
var ErrInvalidJob = errors.New("cron: invalid job")

// Job is a cron job as its owner configured it.
type Job struct {
	ID, AppID, Name, Schedule, Timezone, Command string
	Policy                                       Policy
	TimeoutSeconds                               int64
	Enabled                                      bool
	// NextRunAt is the next tick to fire (kept while disabled, so its ticks still leave
	// skipped runs); nil when the schedule fires no more.
	NextRunAt            *time.Time
	CreatedAt, UpdatedAt time.Time
}

// CheckName validates a job's name.
func CheckName(name string) error {
	if !names.ProcessName(name) {
		return &FieldError{Field: "name", Reason: "must match " + names.ProcessNamePattern}
	}
	return nil
}

// Location loads an IANA time zone; "Local" and the empty name are refused (the server's
// zone is no business of the job's).
func Location(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, &FieldError{Field: "timezone", Reason: "must be an IANA time zone such as Europe/Prague or UTC"}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, &FieldError{Field: "timezone", Reason: fmt.Sprintf("%q is not an IANA time zone", name)}
	}
	return loc, nil
}

// Check validates the job's own fields (not the plan's limits) and returns its parsed
// schedule and zone.
func (j Job) Check(now time.Time) (Schedule, *time.Location, error) {
	if err := CheckName(j.Name); err != nil {
		return Schedule{}, nil, err
	}
	s, err := Parse(j.Schedule)
	if err != nil {
		return Schedule{}, nil, &FieldError{Field: "schedule", Reason: err.Error()}
	}
	loc, err := Location(j.Timezone)
	if err != nil {
		return Schedule{}, nil, err
	}
	if s.Next(now, loc).IsZero() {
		return Schedule{}, nil, &FieldError{Field: "schedule", Reason: "never fires"}
	}
	if len(j.Command) == 0 || len(j.Command) > MaxCommandBytes {
		return Schedule{}, nil, &FieldError{Field: "command", Reason: fmt.Sprintf("must be 1 to %d bytes", MaxCommandBytes)}
	}
	switch j.Policy {
	case Forbid, Replace, Allow:
	default:
		return Schedule{}, nil, &FieldError{Field: "concurrencyPolicy", Reason: "must be forbid, replace or allow"}
	}
	if j.TimeoutSeconds < 1 {
		return Schedule{}, nil, &FieldError{Field: "timeoutSeconds", Reason: "must be at least 1"}
	}
	return s, loc, nil
}
