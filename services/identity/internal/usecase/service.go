// Package usecase holds the identity service's use cases: each method loads what it needs from
// the Store, applies the domain's rules (internal/account, internal/auth), saves the result
// and writes the events it causes to the outbox in the same transaction.
package usecase

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"tori.dev/services/identity/internal/account"
)

// ErrMailUnavailable: the sign-in mail could not be handed to the mail server or written.
var ErrMailUnavailable = errors.New("usecase: mail could not be delivered")

// Mail is one plain-text message.
type Mail struct {
	To      string // a bare address, already validated
	Subject string
	Text    string
}

// Mailer delivers mail (internal/mail).
type Mailer interface {
	Send(ctx context.Context, m Mail) error
}

// ErrPlanUnavailable: identity has no copy of the account's plan and billing could not say
// which it is; the request that needed the plan fails rather than guess its limits.
var ErrPlanUnavailable = errors.New("usecase: account plan unavailable")

// PlanSource asks billing for an account's plan, for the moments before billing's
// plan_changed event has reached identity. An error it returns wraps ErrPlanUnavailable.
type PlanSource interface {
	AccountPlan(ctx context.Context, accountID string) (account.Plan, error)
}

// Deps are what a Service is built from.
type Deps struct {
	Store      Store
	Mailer     Mailer
	Plans      PlanSource
	Log        *slog.Logger
	Now        func() time.Time // injectable so tests can move time; time.Now when nil
	ConsoleURL string           // magic links and the device verification page point here
}

// Service runs the use cases.
type Service struct {
	store   Store
	mailer  Mailer
	plans   PlanSource
	log     *slog.Logger
	clock   func() time.Time
	console string
}

// New builds a Service.
func New(d Deps) *Service {
	clock := d.Now
	if clock == nil {
		clock = time.Now
	}
	return &Service{
		store:   d.Store,
		mailer:  d.Mailer,
		plans:   d.Plans,
		log:     d.Log,
		clock:   clock,
		console: strings.TrimRight(d.ConsoleURL, "/"),
	}
}

// now is the service's time, in UTC and at the microsecond precision Postgres keeps, so a
// value read back equals the one written.
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }
