package certs_test

import (
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/certs"
)

func TestCertificateStateRule(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	later := now.Add(60 * 24 * time.Hour)
	issued := certs.State{Status: certs.StatusIssued, ExpiresAt: later}
	expired := certs.State{Status: certs.StatusIssued, ExpiresAt: now.Add(-time.Hour)}
	failed := certs.State{Status: certs.StatusFailed, LastError: "urn:ietf:params:acme:error:connection"}
	for _, tc := range []struct {
		name string
		prev certs.State
		ev   certs.Event
		want certs.State
	}{
		{"first order", certs.State{}, certs.Event{Step: certs.Ordering, At: now},
			certs.State{Status: certs.StatusPending}},
		{"issued", certs.State{Status: certs.StatusPending}, certs.Event{Step: certs.Obtained, NotAfter: later, At: now},
			issued},
		{"first order fails", certs.State{Status: certs.StatusPending}, certs.Event{Step: certs.Failed, Err: "boom", At: now},
			certs.State{Status: certs.StatusFailed, LastError: "boom"}},
		{"a retry after a failure stays failed", failed, certs.Event{Step: certs.Ordering, At: now},
			failed},
		{"a retry that fails again keeps failed with the new reason", failed, certs.Event{Step: certs.Failed, Err: "again", At: now},
			certs.State{Status: certs.StatusFailed, LastError: "again"}},
		{"a retry that succeeds clears the error", failed, certs.Event{Step: certs.Obtained, NotAfter: later, At: now},
			issued},
		{"waiting for the order rate before any failure", certs.State{Status: certs.StatusPending}, certs.Event{Step: certs.Limited, Err: "rate", At: now},
			certs.State{Status: certs.StatusPending, LastError: "rate"}},
		{"waiting for the order rate after a failure", failed, certs.Event{Step: certs.Limited, Err: "rate", At: now},
			certs.State{Status: certs.StatusFailed, LastError: "rate"}},
		{"renewal starts: still issued", issued, certs.Event{Step: certs.Ordering, At: now},
			issued},
		{"renewal fails while the certificate holds", issued, certs.Event{Step: certs.Failed, Err: "ca down", At: now},
			certs.State{Status: certs.StatusIssued, ExpiresAt: later, LastError: "ca down"}},
		{"renewal limited while the certificate holds", issued, certs.Event{Step: certs.Limited, Err: "rate", At: now},
			certs.State{Status: certs.StatusIssued, ExpiresAt: later, LastError: "rate"}},
		{"renewal fails after the certificate expired", expired, certs.Event{Step: certs.Failed, Err: "ca down", At: now},
			certs.State{Status: certs.StatusFailed, LastError: "ca down"}},
		{"an order after expiry is pending", expired, certs.Event{Step: certs.Ordering, At: now},
			certs.State{Status: certs.StatusPending}},
		{"renewed", certs.State{Status: certs.StatusIssued, ExpiresAt: now.Add(time.Hour), LastError: "ca down"}, certs.Event{Step: certs.Obtained, NotAfter: later, At: now},
			issued},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := certs.Next(tc.prev, tc.ev); got != tc.want {
				t.Fatalf("Next(%+v, %+v) = %+v, want %+v", tc.prev, tc.ev, got, tc.want)
			}
		})
	}
}

// A wildcard covers exactly one label under its base: every app's own hostname, nothing
// deeper, not the base itself, and no custom hostname.
func TestWildcardCovers(t *testing.T) {
	for name, want := range map[string]bool{
		"site.apps.test":   true,
		"SITE.apps.test":   true,
		"a.site.apps.test": false,
		"apps.test":        false,
		".apps.test":       false,
		"shop.example.com": false,
		"site.apps.test.x": false,
	} {
		if got := certs.WildcardCoversForTest("*.apps.test", name); got != want {
			t.Errorf("*.apps.test covers %q: %v, want %v", name, got, want)
		}
	}
	if certs.WildcardCoversForTest("", "site.apps.test") {
		t.Error("no wildcard covers a name")
	}
}
