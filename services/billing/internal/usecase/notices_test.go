package usecase_test

import (
	"testing"
	"time"

	"tori.dev/services/billing/internal/stripepay/stripetest"
	"tori.dev/services/billing/internal/usecase"
)

func TestHoldNoticesGoOutOnDayZeroAndBeforeDaysSevenAndFourteenOnce(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{now: since.Add(time.Hour)}
	f := newWebhookFixture(t, usecase.WithClock(clk.Now))
	svc, rec, id := f.svc, f.rec, f.account
	deliver := func(typ string, at time.Time, status string) {
		t.Helper()
		if err := f.deliver(t, stripetest.EventID(), typ, at, f.invoice(status, since)); err != nil {
			t.Fatal(err)
		}
	}
	send := func(want int64) {
		t.Helper()
		n, err := svc.SendHoldNotices(ctx)
		if err != nil || n != want {
			t.Fatalf("at %v: %d notices, %v; want %d", clk.now, n, err, want)
		}
	}
	send(0)
	deliver("invoice.payment_failed", since, "open")
	send(1)
	send(0)
	day := 24 * time.Hour
	clk.now = since.Add(6*day + time.Hour)
	send(1)
	send(0)
	clk.now = since.Add(13*day + time.Hour)
	send(1)
	send(0)
	notices := rec.noticeEvents()
	var kinds []string
	for _, n := range notices {
		if n.GetAccountId() != id.String() || !n.GetSince().AsTime().Equal(since) || !n.GetServingStopsFrom().AsTime().Equal(since.Add(14*day)) {
			t.Fatalf("notice %v", n)
		}
		kinds = append(kinds, n.GetNotice())
	}
	if len(kinds) != 3 || kinds[0] != "payment_failed" || kinds[1] != "deploys_refused_soon" || kinds[2] != "serving_stops_soon" {
		t.Fatalf("notices %v", kinds)
	}
	// Paid: nothing more, whatever the clock says.
	deliver("invoice.paid", since.Add(13*day+2*time.Hour), "paid")
	clk.now = since.Add(13*day + 3*time.Hour)
	send(0)
}
