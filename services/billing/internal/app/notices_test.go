package app_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/app"
	"tori.dev/services/billing/internal/providerfake"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/stripepay"
	"tori.dev/services/billing/internal/stripepay/stripetest"
)

func TestHoldNoticesGoOutOnDayZeroAndBeforeDaysSevenAndFourteenOnce(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	st := recordingStore{store.New(newPool(t)), rec}
	since := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{now: since.Add(time.Hour)}
	svc := app.New(st, app.WithClock(clk.Now), app.WithPayments(app.Payments{
		Provider: providerfake.New(), Events: stripepay.Events{Secret: whsec}, Prices: testPrices, ConsoleURL: "http://console.test",
	}))
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	if _, err := svc.Portal(ctx, id); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Customer(ctx, id)
	deliver := func(typ string, at time.Time, status string) {
		t.Helper()
		body := stripetest.Event(stripetest.EventID(), typ, at, stripetest.Invoice("in_"+id.String(), c.CustomerID, "sub_1", id, "T-1", status, 900, 156, since))
		if err := svc.ApplyWebhook(ctx, body, stripetest.Sign(body, whsec)); err != nil {
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
