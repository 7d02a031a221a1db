package usecase

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/revision"
)

// Domain is an active custom hostname of an app.
type Domain struct{ Hostname, AppID string }

// Tx is the work done in one transaction; events published through it commit with it.
// Revision and Live lock what they return until the transaction ends.
type Tx interface {
	// Publish writes an event to the outbox.
	Publish(ctx context.Context, key string, msg proto.Message) error
	// AddRevision records a start command; a redelivery changes nothing. A command for a
	// deleted app is dropped (false).
	AddRevision(ctx context.Context, r revision.Revision) (bool, error)
	// Want marks a revision to be activated (true) or discarded (false).
	Want(ctx context.Context, deployID string, activate bool) error
	// DeleteApp forgets the app's route and hostnames (as of deletedAt) and marks its
	// revisions discarded.
	DeleteApp(ctx context.Context, appID string, deletedAt time.Time) error
	// SetState records a move the state machine allowed; it fails when the record is no
	// longer in state from (another change won), so a stale read never overwrites.
	SetState(ctx context.Context, deployID string, from, to revision.State) error
	Revision(ctx context.Context, deployID string) (revision.Revision, error)
	Live(ctx context.Context, appID string) (revision.Route, bool, error)
	SetLive(ctx context.Context, r revision.Route) error
	// SetProcesses records the process types a revision runs (a source's once its tree is
	// planned), web first.
	SetProcesses(ctx context.Context, deployID string, ps []revision.Process) error
	// ReleaseJob returns the named Job's state, or "" when it never ran.
	ReleaseJob(ctx context.Context, name string) (revision.JobState, error)
	SetReleaseJob(ctx context.Context, name, deployID string, state revision.JobState) error
	// SetDomain records a hostname active for appID as of at: a hostname goes to the app
	// that activated it last, by the apps service's clock, whatever order the events came
	// in; a deleted app gets none.
	SetDomain(ctx context.Context, hostname, appID string, at time.Time) error
	// RemoveDomain records a hostname no longer served for appID as of at, unless a later
	// change to it (another app's claim among them) is recorded already.
	RemoveDomain(ctx context.Context, hostname, appID string, at time.Time) error
	// SetAppAccount records the account an app belongs to.
	SetAppAccount(ctx context.Context, appID, accountID string) error
	// SetFormation keeps f as deployID's formation unless one as new (by generation) is
	// kept; it reports whether f was taken.
	SetFormation(ctx context.Context, appID, deployID string, f revision.Formation) (bool, error)
	// Formation is the formation kept for deployID; the zero Formation (one web) when none is.
	Formation(ctx context.Context, deployID string) (revision.Formation, error)
	// SaveHold keeps an account's payment-failure hold (stopsFrom nil: none) unless a
	// version as new is kept.
	SaveHold(ctx context.Context, accountID string, stopsFrom *time.Time, version int64) error
}

// Store is the zone's record. Methods on the Store itself read outside any transaction.
type Store interface {
	InTx(ctx context.Context, fn func(Tx) error) error
	// Work lists the revisions in an unsettled state (revision.State.Unsettled), oldest first.
	Work(ctx context.Context) ([]revision.Revision, error)
	Routes(ctx context.Context) ([]revision.Route, error)
	Domains(ctx context.Context) ([]Domain, error)
	// PausedApps maps each app whose account is under a hold to when its serving stops.
	PausedApps(ctx context.Context) (map[string]time.Time, error)
	Revision(ctx context.Context, deployID string) (revision.Revision, error)
	// What one change to the edge's table reads (routing.go), by key:
	// LiveRoute is the app's live route (ok false: none).
	LiveRoute(ctx context.Context, appID string) (revision.Route, bool, error)
	// HostOwner is the app an active custom hostname belongs to ("": not active).
	HostOwner(ctx context.Context, hostname string) (string, error)
	// AppHold is when the app's serving stops under its account's hold (nil: none).
	AppHold(ctx context.Context, appID string) (*time.Time, error)
	// AccountHold is the account's apps and when their serving stops (nil: no hold).
	AccountHold(ctx context.Context, accountID string) ([]string, *time.Time, error)
}

// Runner runs service revisions (source builds as local processes, images through a
// container runtime). The static path needs none of it.
type Runner interface {
	// Prepare builds the revision, runs its release Job and starts its process, returning
	// once it is healthy. It reports release steps and reads the Job record through jobs.
	Prepare(ctx context.Context, rev revision.Revision, jobs JobRecorder) error
	// Activate makes the revision the one the edge proxies to, runs formation f of it and
	// stops the previous one.
	Activate(ctx context.Context, rev revision.Revision, previous string, f revision.Formation) error
	// Scale runs formation f of the app's live revision deployID; a formation for another
	// revision or not newer than the one running changes nothing.
	Scale(ctx context.Context, appID, deployID string, f revision.Formation) error
	// Discard stops a prepared revision and removes its files.
	Discard(ctx context.Context, appID, deployID string) error
	// StopApp stops every process of an app and removes its files.
	StopApp(ctx context.Context, appID string) error
}

// JobRecorder keeps release Jobs by name so that a retry reuses the same Job.
type JobRecorder interface {
	JobState(ctx context.Context, name string) (revision.JobState, error)
	SetJobState(ctx context.Context, name, deployID string, state revision.JobState) error
	// Step reports a step of the revision to the control plane.
	Step(ctx context.Context, step Step, message string) error
	// BuildDetected reports how a source revision is built and started, and why: to the
	// control plane (the deploy's build field) and as one system line of the app's log. It
	// records the process types the plan declares as the revision's.
	BuildDetected(ctx context.Context, plan buildplan.Plan) error
	// Discarded reports whether the control plane gave the revision up meanwhile (cancel,
	// deadline, delete): a finished release Job is then collected and nothing starts.
	Discarded(ctx context.Context) bool
}
