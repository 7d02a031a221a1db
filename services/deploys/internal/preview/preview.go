// Package preview is the preview domain (issue 40): a revision of an app served at a host of
// its own for a while, never live. It does no I/O.
package preview

import (
	"time"
)

// Status is where a preview is in its life: deploying → ready | failed, then expired or
// deleted (both final: its URL answers 410).
type Status string

// The preview states of the API's Preview.
const (
	Deploying Status = "deploying"
	Ready     Status = "ready"
	Failed    Status = "failed"
	Expired   Status = "expired"
	Deleted   Status = "deleted"
)

// Counted reports whether the preview counts toward the plan's previews limit.
func (s Status) Counted() bool { return s == Deploying || s == Ready }

// Removed reports whether the preview is gone (expired or deleted): final.
func (s Status) Removed() bool { return s == Expired || s == Deleted }

// Database is whether a preview sees the app's database variables.
type Database string

// A preview's database modes: none (the default) leaves DATABASE_URL and
// DATABASE_RESTORE_URL out of its environment; shared keeps them.
const (
	DatabaseNone   Database = "none"
	DatabaseShared Database = "shared"
)

// Preview is one preview of an app.
type Preview struct {
	ID        string
	Name      string
	AppID     string
	AccountID string
	Status    Status
	// DeployID is the preview's current revision (the one deploying, ready or failed).
	DeployID string
	// ServingDeployID is the revision the zone was last told to serve at the preview's host
	// ("" before the first is ready): it keeps serving while a replacement deploys.
	ServingDeployID string
	Database        Database
	// EnvKeys are the names of the environment overrides, never their values.
	EnvKeys    []string
	TTLSeconds int64
	ExpiresAt  time.Time
	// Error is the zone's deploy error code when failed.
	Error     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Overridden reports whether the preview's revision ran with environment overrides: then a
// promote builds again (a build may have read them) instead of reusing its revision.
func (p *Preview) Overridden() bool { return len(p.EnvKeys) > 0 }

// Replace starts a new revision of the preview in place: same id, same URL.
func (p *Preview) Replace(now time.Time, deployID string, db Database, envKeys []string, ttl int64) {
	p.Status, p.DeployID, p.Database, p.EnvKeys, p.Error = Deploying, deployID, db, envKeys, ""
	p.TTLSeconds, p.ExpiresAt, p.UpdatedAt = ttl, now.Add(time.Duration(ttl)*time.Second), now
}

// MarkReady records that the zone prepared revision deployID and is told to serve it. It
// reports false when deployID is no longer the preview's revision or the preview is gone.
func (p *Preview) MarkReady(now time.Time, deployID string) bool {
	if p.Status != Deploying || p.DeployID != deployID {
		return false
	}
	p.Status, p.ServingDeployID, p.Error, p.UpdatedAt = Ready, deployID, "", now
	return true
}

// MarkFailed records that revision deployID failed with code; false when it no longer matters.
func (p *Preview) MarkFailed(now time.Time, deployID, code string) bool {
	if p.Status != Deploying || p.DeployID != deployID {
		return false
	}
	p.Status, p.Error, p.UpdatedAt = Failed, code, now
	return true
}

// Remove ends the preview (expired or deleted); false when it was gone already.
func (p *Preview) Remove(now time.Time, to Status) bool {
	if p.Status.Removed() {
		return false
	}
	p.Status, p.UpdatedAt = to, now
	return true
}

// Extend sets a new time to live from now; ErrExpired once the preview is gone.
func (p *Preview) Extend(now time.Time, ttl int64) error {
	if p.Status.Removed() {
		return ErrExpired
	}
	p.TTLSeconds, p.ExpiresAt, p.UpdatedAt = ttl, now.Add(time.Duration(ttl)*time.Second), now
	return nil
}

// Promotable refuses a promote of a preview that is gone (ErrExpired) or has no ready
// revision (ErrNotReady).
func (p *Preview) Promotable() error {
	switch {
	case p.Status.Removed():
		return ErrExpired
	case p.Status != Ready:
		return ErrNotReady
	}
	return nil
}
