package drains

import (
	"context"
	"errors"
	"time"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// Apps finds a team's live app (usecase.AppFinder).
type Apps interface {
	Target(ctx context.Context, accountID, slug string) (usecase.Target, error)
}

// Limits is the plan's number of drains per app for a team.
type Limits interface {
	DrainLimit(ctx context.Context, accountID string) (limit int, plan string, err error)
}

// Service is the drain routes' use cases.
type Service struct {
	store   Store
	apps    Apps
	limits  Limits
	guard   Guard
	deliver Deliverer
	now     func() time.Time
}

// NewService builds the use cases.
func NewService(st Store, apps Apps, limits Limits, dv Deliverer, now func() time.Time) *Service {
	return &Service{store: st, apps: apps, limits: limits, guard: dv.Guard, deliver: dv, now: now}
}

// Create adds a drain to the team's app slug. Refusals in order: the app (logs.ErrNotFound),
// the URL (*logs.InvalidParameterError), its address (ErrAddressForbidden), the plan
// (ErrLimitReached). The secret (HTTPS) is in the drain returned, to be shown this once.
// id is the new drain's (the caller names it in the audit entry before the commit).
func (s *Service) Create(ctx context.Context, team, slug, rawURL, id string) (Drain, error) {
	app, err := s.apps.Target(ctx, team, slug)
	if err != nil {
		return Drain{}, err
	}
	t, err := ParseURL(rawURL)
	if err != nil {
		return Drain{}, err
	}
	if err := s.guard.Check(ctx, t); err != nil {
		if errors.Is(err, ErrUnresolvable) {
			return Drain{}, &logs.InvalidParameterError{Name: "url", Reason: "its host " + t.Host + " does not resolve"}
		}
		return Drain{}, err
	}
	limit, plan, err := s.limits.DrainLimit(ctx, team)
	if err != nil {
		return Drain{}, err
	}
	d := Drain{
		ID: id, AppID: app.AppID, AccountID: team, URL: rawURL, Kind: t.Kind,
		Status: StatusActive, CreatedAt: s.now().UTC().Truncate(time.Microsecond),
	}
	if t.Kind == KindHTTPS {
		if d.Secret, err = NewSecret(); err != nil {
			return Drain{}, err
		}
	}
	if err := s.store.CreateDrain(ctx, d, limit, plan); err != nil {
		return Drain{}, err
	}
	return d, nil
}

// List is the team's app's drains.
func (s *Service) List(ctx context.Context, team, slug string) ([]Drain, error) {
	app, err := s.apps.Target(ctx, team, slug)
	if err != nil {
		return nil, err
	}
	return s.store.Drains(ctx, app.AppID)
}

// Get is one of the team's app's drains.
func (s *Service) Get(ctx context.Context, team, slug, id string) (Drain, error) {
	app, err := s.apps.Target(ctx, team, slug)
	if err != nil {
		return Drain{}, err
	}
	return s.store.DrainOf(ctx, app.AppID, id)
}

// Delete removes one of the team's app's drains with its backlog.
func (s *Service) Delete(ctx context.Context, team, slug, id string) error {
	app, err := s.apps.Target(ctx, team, slug)
	if err != nil {
		return err
	}
	return s.store.DeleteDrain(ctx, app.AppID, id)
}

// TestResult is what a test delivery came to.
type TestResult struct {
	Delivered bool
	Status    int    // HTTPS: the receiver's status, when one came
	Error     string // when not delivered
}

// TestMessage is the line a test delivery sends.
const TestMessage = "Tori drain test"

// Test sends one system line (TestMessage, id "0", not stored in the log) to the drain now.
func (s *Service) Test(ctx context.Context, team, slug, id string) (TestResult, error) {
	d, err := s.Get(ctx, team, slug, id)
	if err != nil {
		return TestResult{}, err
	}
	// The secret is not in Get's answer path to the client, but the store row has it.
	e := logs.Entry{ID: 0, AppID: d.AppID, Stream: logs.StreamSystem, Timestamp: s.now().UTC(), Message: TestMessage}
	res, err := s.deliver.Deliver(ctx, d, slug, []logs.Entry{e})
	if err != nil {
		return TestResult{Status: res.Status, Error: err.Error()}, nil
	}
	return TestResult{Delivered: true, Status: res.Status}, nil
}
