package hold

import (
	"slices"
	"testing"
	"time"

	"tori.dev/contract/billinghold"
)

func TestOutstanding(t *testing.T) {
	for status, want := range map[string]bool{"open": true, "uncollectible": true, "paid": false, "void": false, "draft": false} {
		if Outstanding(status) != want {
			t.Errorf("%s: %v", status, !want)
		}
	}
}

func TestNoticesAreDueOnDayZeroAndTheDayBeforeEachStep(t *testing.T) {
	since := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	h := billinghold.From(since)
	d := 24 * time.Hour
	pf, dr, ss := billinghold.NoticePaymentFailed, billinghold.NoticeDeploysRefusedSoon, billinghold.NoticeServingStopsSoon
	cases := []struct {
		at   time.Duration
		want []billinghold.Notice
	}{
		{-time.Second, nil},
		{0, []billinghold.Notice{pf}},
		{6*d - time.Second, []billinghold.Notice{pf}},
		{6 * d, []billinghold.Notice{pf, dr}},
		{7*d - time.Second, []billinghold.Notice{pf, dr}},
		{7 * d, []billinghold.Notice{pf}},
		{13 * d, []billinghold.Notice{pf, ss}},
		{14*d - time.Second, []billinghold.Notice{pf, ss}},
		{14 * d, []billinghold.Notice{pf}},
		{30*d - time.Second, []billinghold.Notice{pf}},
		{30 * d, nil},
	}
	for _, tc := range cases {
		if got := Due(h, since.Add(tc.at)); !slices.Equal(got, tc.want) {
			t.Errorf("at %v: %v, want %v", tc.at, got, tc.want)
		}
	}
}
