package usecase_test

import (
	"testing"
	"time"

	"tori.dev/contract/billinghold"
	"tori.dev/services/billing/internal/stripepay/stripetest"
	"tori.dev/services/billing/internal/usecase"
)

// clock is a clock the test moves.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func TestTheHoldCountsFromTheFirstFailedAttemptAndPaymentUndoesIt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{now: now}
	f := newWebhookFixture(t, usecase.WithClock(clk.Now))
	svc, rec, id := f.svc, f.rec, f.account
	inv := func(status string) map[string]any { return f.invoice(status, now.Add(-40*24*time.Hour)) }
	deliver := func(typ string, at time.Time, object map[string]any) {
		t.Helper()
		if err := f.deliver(t, stripetest.EventID(), typ, at, object); err != nil {
			t.Fatal(err)
		}
	}
	first := now.Add(-10 * 24 * time.Hour)
	// The retry of day 3 is told before the first attempt: the hold still starts at the first.
	deliver("invoice.payment_failed", first.Add(3*24*time.Hour), inv("open"))
	deliver("invoice.payment_failed", first, inv("open"))

	state := func() usecase.State {
		t.Helper()
		s, err := svc.State(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := state()
	if s.Hold == nil || !s.Hold.Since.Equal(first) || s.Stage != billinghold.DeploysRefused {
		t.Fatalf("hold %+v at stage %s", s.Hold, s.Stage)
	}
	holds := rec.holdEvents()
	if len(holds) != 2 || !holds[1].GetActive() || !holds[1].GetSince().AsTime().Equal(first) ||
		!holds[1].GetServingStopsFrom().AsTime().Equal(first.Add(14*24*time.Hour)) || holds[1].GetVersion() != 2 {
		t.Fatalf("hold events %v", holds)
	}
	for _, step := range []struct {
		at   time.Duration
		want billinghold.Stage
	}{{-10 * 24 * time.Hour, billinghold.Notified}, {4 * 24 * time.Hour, billinghold.ServingStopped}, {20 * 24 * time.Hour, billinghold.Reclaimable}} {
		clk.now = now.Add(step.at)
		if s := state(); s.Stage != step.want {
			t.Fatalf("at %v: stage %s, want %s", step.at, s.Stage, step.want)
		}
	}
	// Paying the invoice undoes the hold at once, and says so once.
	deliver("invoice.paid", now.Add(time.Hour), inv("paid"))
	if s := state(); s.Hold != nil {
		t.Fatalf("hold after payment: %+v", s.Hold)
	}
	holds = rec.holdEvents()
	if len(holds) != 3 || holds[2].GetActive() || holds[2].GetSince() != nil || holds[2].GetVersion() != 3 {
		t.Fatalf("hold events %v", holds)
	}
	// A late, older failure changes nothing: the invoice is paid.
	deliver("invoice.payment_failed", first.Add(5*24*time.Hour), inv("open"))
	if s := state(); s.Hold != nil || len(rec.holdEvents()) != 3 {
		t.Fatalf("a late failure reopened the hold: %+v", s.Hold)
	}
}
