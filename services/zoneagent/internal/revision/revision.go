// Package revision is the zone agent's domain: a revision of an app that the deploys service
// asked this zone to run, its kinds, its states and the moves between them. No I/O.
package revision

import "time"

// Kind is how a revision runs.
type Kind string

// Kinds a StartRevision carries.
const (
	// KindStatic is a site published to the zone's bucket and served from there by the edge.
	KindStatic Kind = "static"
	// KindSource is a tarball built and run as a local process.
	KindSource Kind = "source"
	// KindImage is a container image run through the zone's container runtime.
	KindImage Kind = "image"
)

// Static reports whether the edge serves the revision from disk (no process).
func (k Kind) Static() bool { return k == KindStatic }

// Image reports whether the revision runs in a container.
func (k Kind) Image() bool { return k == KindImage }

// Revision is one deploy's revision on this zone.
type Revision struct {
	DeployID, AppID, Slug, ArtifactKey, Image string
	Kind                                      Kind
	Release                                   []string
	ReleaseGiven                              bool
	// ClearCache empties the app's build cache before this revision's build.
	ClearCache                    bool
	EnvSealed                     []byte
	EnvKeyID, EnvDeployID         string
	BuildMinutes, MinScale        int64
	CPU                           float64
	Deadline                      *time.Time
	State                         State
	ActivateWanted, DiscardWanted bool
	// Processes are the types the revision declares, web first: from StartRevision for an
	// image, from tori.json or the Procfile once a source is built; one web running the start
	// command when none is declared.
	Processes []Process
	// InstanceMemoryBytes is each instance's memory limit (the plan's); 0: the zone's.
	InstanceMemoryBytes int64
	// PreviewID, when set, makes this a preview's revision (names.ValidPreviewID): it is
	// served only at the preview's host and never becomes the app's live revision.
	PreviewID string
	// BuiltFromDeployID names a revision of the same app whose built tree or site bundle
	// this one may reuse instead of preparing from its artifact (a preview's promote).
	BuiltFromDeployID string
}

// MoveTo moves r to state to, or refuses as Transition does and leaves r as it was.
func (r *Revision) MoveTo(to State) error {
	if err := Transition(r.State, to); err != nil {
		return err
	}
	r.State = to
	return nil
}

// Route is the revision that serves an app.
type Route struct {
	AppID, Slug, DeployID string
	Kind                  Kind
}

// JobState is where a release Job (release-<deployId>) stands; a retry reads it by name.
type JobState string

// Release Job states; the empty state is a Job that never ran.
const (
	JobRunning   JobState = "running"
	JobSucceeded JobState = "succeeded"
	JobFailed    JobState = "failed"
)
