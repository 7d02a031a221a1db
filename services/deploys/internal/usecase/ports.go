package usecase

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
)

// App is the deploys service's copy of an app, fed by the apps service's events.
type App struct {
	ID        string
	AccountID string
	Slug      string
	Kind      string // static or service
	Zone      string
	Deleted   bool
}

// Plan is the deploys service's copy of an account's plan limits.
type Plan struct {
	Name              string
	ConcurrentDeploys int64
	UploadBytes       int64
	BuildMinutes      int64
	MinScale          int64
	CPU               float64
	Version           int64
	// The formation and cron limits (issue 38). Zero means billing has not announced it yet:
	// WithProcessDefaults fills it in.
	ProcessTypes           int64
	InstancesPerProcess    int64
	InstancesTotal         int64
	CronJobs               int64
	CronMinIntervalMinutes int64
	CronTimeoutSeconds     int64
	InstanceMemoryBytes    int64
	// The preview limits (issue 40): previews an app may have deploying or ready at once,
	// and the longest ttl one may have. Zero: not announced yet, as above.
	Previews           int64
	PreviewMaxTTLHours int64
}

// Tx is the work the use cases do inside one transaction. Events published through it
// commit with the state change (transactional outbox).
type Tx interface {
	// LockAccount serializes deploy creation per account, so the concurrent-deploy count
	// cannot be raced past the limit.
	LockAccount(ctx context.Context, accountID string) error
	CountOpen(ctx context.Context, accountID string) (int64, error)
	// CountUploads counts the account's uploads under way at now; InsertUpload holds a slot
	// of the concurrent-deploy limit for an upload until until, DeleteUpload gives it back.
	CountUploads(ctx context.Context, accountID string, now time.Time) (int64, error)
	InsertUpload(ctx context.Context, id, accountID string, until time.Time) error
	DeleteUpload(ctx context.Context, id string) error
	Insert(ctx context.Context, d *deploy.Deploy) error
	Update(ctx context.Context, d *deploy.Deploy) error
	// SetBuild records how the zone builds and starts a source deploy.
	SetBuild(ctx context.Context, deployID string, b deploy.Build) error
	// Deploy loads a deploy with a row lock; deploy.ErrNotFound when it does not exist.
	Deploy(ctx context.Context, id string) (*deploy.Deploy, error)
	// Live loads the app's live deploy with a row lock, or nil.
	Live(ctx context.Context, appID string) (*deploy.Deploy, error)
	// OpenDeploys loads the app's building and releasing deploys with row locks.
	OpenDeploys(ctx context.Context, appID string) ([]*deploy.Deploy, error)
	App(ctx context.Context, appID string) (App, error)
	SaveApp(ctx context.Context, a App, createdAt time.Time) error
	MarkAppDeleted(ctx context.Context, appID string, at time.Time) error
	SavePlan(ctx context.Context, accountID string, p Plan) error
	// SaveHold keeps the account's hold copy with the highest version.
	SaveHold(ctx context.Context, accountID string, h deploy.Hold) error
	// RecordRevisionPlan records the plan version a revision starts with.
	RecordRevisionPlan(ctx context.Context, deployID string, version int64) error
	// PurgeApp deletes the app's deploys and marks the app cleaned.
	PurgeApp(ctx context.Context, appID string, at time.Time) error
	FormationTx
	PreviewTx
	Publisher
}

// PreviewTx is the previews' part of a transaction (issue 40).
type PreviewTx interface {
	// Preview loads a preview by id with a row lock; preview.ErrNotFound for none.
	Preview(ctx context.Context, id string) (*preview.Preview, error)
	// PreviewByRef is the app's preview named by id, or failing that by name, locked.
	PreviewByRef(ctx context.Context, appID, ref string) (*preview.Preview, error)
	// ActivePreviewByName is the preview holding name in the app (deploying, ready or
	// failed), locked, or nil.
	ActivePreviewByName(ctx context.Context, appID, name string) (*preview.Preview, error)
	// CountPreviews counts the app's deploying and ready previews.
	CountPreviews(ctx context.Context, appID string) (int64, error)
	// InsertPreview reports false when the id is taken.
	InsertPreview(ctx context.Context, p *preview.Preview) (bool, error)
	UpdatePreview(ctx context.Context, p *preview.Preview) error
	// DuePreviews are previews past expiry not yet gone, locked, skipping locked ones.
	DuePreviews(ctx context.Context, now time.Time, limit int) ([]*preview.Preview, error)
	MarkPreviewsDeleted(ctx context.Context, appID string, at time.Time) error
}

// Publisher puts an event or a zone command in the transaction's outbox, so it leaves only if
// the change commits.
type Publisher interface {
	Publish(ctx context.Context, routingKey string, msg proto.Message) error
}

// Store is the deploys service's persistence.
type Store interface {
	InTx(ctx context.Context, fn func(Tx) error) error
	// AppBySlug is the team's live app slug (an app's AccountID is its owning team's id).
	AppBySlug(ctx context.Context, accountID, slug string) (App, error)
	// AppTeam is the team that owns the live app slug; found is false for none.
	AppTeam(ctx context.Context, slug string) (teamID string, found bool, err error)
	Plan(ctx context.Context, accountID string) (Plan, bool, error)
	// Hold is the account's payment-failure hold copy; found is false when there is none.
	Hold(ctx context.Context, accountID string) (h deploy.Hold, found bool, err error)
	// StalePlanRevisions are live service revisions started under an older plan version than
	// their account's copy, whose app has no deploy under way.
	StalePlanRevisions(ctx context.Context, limit int) ([]StaleRevision, error)
	CountOpen(ctx context.Context, accountID string) (int64, error)
	// DeleteUpload gives an upload's slot back; PruneUploads drops slots past their time.
	DeleteUpload(ctx context.Context, id string) error
	PruneUploads(ctx context.Context, now time.Time) (int64, error)
	Deploy(ctx context.Context, id string) (*deploy.Deploy, error)
	Live(ctx context.Context, appID string) (*deploy.Deploy, error)
	// List returns the app's deploys newest first, older than before when it is set.
	List(ctx context.Context, appID string, limit int, before string) ([]*deploy.Deploy, error)
	// Overdue returns ids of deploys still open whose insert was at or before cutoff.
	Overdue(ctx context.Context, cutoff time.Time, limit int) ([]string, error)
	ArtifactReferenced(ctx context.Context, key string) (bool, error)
	// AppsToClean returns deleted apps whose cleanup has not finished.
	AppsToClean(ctx context.Context, limit int) ([]string, error)
	// MarkReclaimable marks the artifacts of accounts whose hold reached its reclaimable
	// date by now and clears the rest, returning how many deploys changed.
	MarkReclaimable(ctx context.Context, now time.Time) (int64, error)
	// ArtifactsOf returns the artifact keys of every deploy of the app.
	ArtifactsOf(ctx context.Context, appID string) ([]string, error)
	// Formation is the app's formation, web first then by type (empty before its first
	// service deploy goes live).
	Formation(ctx context.Context, appID string) ([]deploy.FormationEntry, error)
	// Preview loads a preview by id; PreviewByRef the app's by id or name; Previews the
	// app's but the deleted ones, newest first.
	Preview(ctx context.Context, id string) (*preview.Preview, error)
	PreviewByRef(ctx context.Context, appID, ref string) (*preview.Preview, error)
	Previews(ctx context.Context, appID string) ([]*preview.Preview, error)
	// PrunePreviewRevisions deletes finished preview revisions nothing serves any more.
	PrunePreviewRevisions(ctx context.Context, limit int) (int64, error)
}
