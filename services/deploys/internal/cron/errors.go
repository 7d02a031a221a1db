package cron

import (
	"errors"
	"fmt"
)

// Sentinels the HTTP layer translates (httpapi.cronToHTTP).
var (
	ErrJobNotFound   = errors.New("cron: no such job")
	ErrJobExists     = errors.New("cron: the app has a job of that name")
	ErrNotAService   = errors.New("cron: cron jobs run only in service apps")
	ErrRunInProgress = errors.New("cron: the job's runs in progress leave no room for another under its policy (forbid: one; allow: 10)")
	ErrNoLiveDeploy  = errors.New("cron: the app has no live deploy to run from")
	ErrJobLimit      = errors.New("cron: the plan's cron jobs are all taken")
	ErrTooFrequent   = errors.New("cron: the schedule fires more often than the plan allows")
)

// LimitError is a plan limit that refused a job: ErrJobLimit (Limit jobs per app) or
// ErrTooFrequent (Limit minutes between firings).
type LimitError struct {
	Err   error
	Limit int64
	Plan  string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v (limit %d on %s)", e.Err, e.Limit, e.Plan)
}

func (e *LimitError) Unwrap() error { return e.Err }
