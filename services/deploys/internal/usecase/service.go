// Package usecase holds the deploys use cases: creating, listing, cancelling and rolling
// back deploys over HTTP, and driving the state machine from the zones' reports, the apps'
// life and the clock.
package usecase

import (
	"log/slog"
	"time"
	"tori.dev/services/deploys/internal/deploy"

	"github.com/google/uuid"

	"tori.dev/services/deploys/internal/objects"
)

// Clock tells the time; tests inject one to cross the 20-minute deadline without waiting.
type Clock func() time.Time

// Service is the deploys use cases.
type Service struct {
	store   Store
	objects objects.Store
	links   ArtifactLinks
	plans   PlanSource
	env     EnvSource
	apps    AppSource
	now     Clock
	newID   func() string
	log     *slog.Logger
	images  deploy.Registries
}

// Deps are the service's collaborators. Now and NewID default to the wall clock and UUIDv7.
type Deps struct {
	Store   Store
	Objects objects.Store
	// ArtifactLinks makes the URLs zones fetch artifacts by (the same S3 store as Objects);
	// nil where no zone fetches (tests of other use cases).
	ArtifactLinks ArtifactLinks
	Plans         PlanSource
	Env           EnvSource
	Apps          AppSource // nil: only the copy fed by events is consulted
	Now           Clock
	NewID         func() string
	Log           *slog.Logger
	// Registries is where images may come from; the zero value: any public DNS name.
	Registries deploy.Registries
}

// New builds the service.
func New(d Deps) *Service {
	s := &Service{store: d.Store, objects: d.Objects, links: d.ArtifactLinks, plans: d.Plans, env: d.Env, apps: d.Apps, now: d.Now, newID: d.NewID, log: d.Log, images: d.Registries}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// clock returns the current time in UTC at millisecond precision, as the API shows it.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// Store exposes the store, so tests can run use cases in a transaction of their own as the
// bus consumers do in theirs.
func (s *Service) Store() Store { return s.store }
