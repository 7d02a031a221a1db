// Package deploy is the deploy domain: what a deploy is, the states it moves through and the
// rules for moving, and the checks on what a customer sends. It does no I/O.
package deploy

import "time"

// Status is where a deploy is in its life.
type Status string

// The states of decisions.md. building and releasing are open (work is under way); live is
// settled but not final (a newer deploy supersedes it); the others are terminal.
const (
	Building   Status = "building"
	Releasing  Status = "releasing"
	Live       Status = "live"
	Failed     Status = "failed"
	Cancelled  Status = "cancelled"
	Superseded Status = "superseded"
	// Previewing is a preview's revision its zone serves at the preview's host: never live,
	// neither open nor terminal (issue 40).
	Previewing Status = "previewing"
)

// Open reports whether work on the deploy is still under way.
func (s Status) Open() bool { return s == Building || s == Releasing }

// Terminal reports whether the deploy can never change again.
func (s Status) Terminal() bool { return s == Failed || s == Cancelled || s == Superseded }

// Kind is what the deploy carries.
type Kind string

// Deploy kinds: a static site, a prebuilt image, or a source tarball the zone builds.
const (
	KindStatic Kind = "static"
	KindImage  Kind = "image"
	KindSource Kind = "source"
)

// Deadline is how long a deploy may stay open after insert before the control plane closes
// it (the contract's 20 minutes; not adjustable).
const Deadline = 20 * time.Minute

// Error codes a deploy can end with.
const (
	ErrCodeDeadline = "deadline_exceeded"
)

// Deploy is one attempt to put a revision of an app live.
type Deploy struct {
	ID         string
	AppID      string
	AccountID  string
	Kind       Kind
	Status     Status
	Image      string   // image deploys only
	Release    []string // nil when no release command was given
	RollbackOf string   // the deploy this one rolls back to, or ""
	Error      string   // error code when failed
	// ArtifactKey names the uploaded object (static and source deploys).
	ArtifactKey string
	// Framework is what the upload's root package.json showed (DetectFramework); static for
	// every deploy without one, images included. A rollback or a plan redeploy keeps its
	// source's, as it keeps its artifact.
	Framework Framework
	// Build is how the zone builds and starts a source deploy, once it has said (nil before).
	Build *Build
	// Processes are the process types an image deploy's body declared (nil: one web from
	// the image's command). A rollback or a plan redeploy sends them to the zone again.
	Processes []Process
	// Env is the environment snapshot, as ciphertext only.
	Env       Snapshot
	CreatedAt time.Time
	UpdatedAt time.Time
	// FinishedAt is when the deploy reached live or a terminal state first.
	FinishedAt *time.Time
	// LiveAt is when the deploy went live, if it ever did; a rollback needs it.
	LiveAt *time.Time
	// ActivatingAt is when the zone was told to switch traffic to the revision. The deploy
	// goes live only when the zone reports that its edge serves it.
	ActivatingAt *time.Time
	// PreviewID marks a preview's revision: never listed among the app's deploys, never
	// live, never a rollback target (issue 40). "" for a deploy.
	PreviewID string
}

// DeadlineAt is when the control plane closes the deploy if it is still open.
func (d *Deploy) DeadlineAt() time.Time { return d.CreatedAt.Add(Deadline) }

// NewerThan reports whether d was created after o. Ids are UUIDv7, sortable by creation, and
// break ties between deploys inserted in the same instant.
func (d *Deploy) NewerThan(o *Deploy) bool {
	if !d.CreatedAt.Equal(o.CreatedAt) {
		return d.CreatedAt.After(o.CreatedAt)
	}
	return d.ID > o.ID
}

// Running reports whether d's revision is, or is about to be, on its zone: building,
// releasing or live. Only then may the zone open its environment.
func (d *Deploy) Running() bool { return d.Status.Open() || d.Status == Live }

// Rollbackable reports whether a new deploy may roll back to d: only a deploy that was once
// live has a revision known to work.
func (d *Deploy) Rollbackable() bool { return d.LiveAt != nil }

// Snapshot is an app's environment taken for a deploy, sealed by the apps service. It is
// opened only by the zone, for the deploy it was sealed for (For), when it starts a revision.
type Snapshot struct {
	Sealed []byte
	KeyID  string
	For    string // the deploy id it was sealed for
}

// Empty reports whether no snapshot was taken (static deploys).
func (s Snapshot) Empty() bool { return len(s.Sealed) == 0 }
