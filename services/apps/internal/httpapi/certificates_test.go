package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/apps/internal/apptest"
)

// The zone's certificate reports reach the domain in GET /api/apps/{slug}/domains: pending
// before any, then issued with its end or failed with the CA's reason; an older report
// arriving late changes nothing; the owner is told of a failure once, not at every retry.
func TestCertificateStateOnTheDomain(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.SetPlan(acct, "flock", 1)
	created := s.CreateApp(acct, map[string]any{"name": "shop"})
	appID, zone := created["id"].(string), created["zone"].(string)
	s.Must(http.StatusCreated, acct, http.MethodPost, "/api/apps/shop/domains", map[string]any{"hostname": "shop.example.net"})
	cert := func() map[string]any {
		return domainOf(t, s, acct, "shop", "shop.example.net")["certificate"].(map[string]any)
	}
	if c := cert(); c["status"] != "pending" || c["expiresAt"] != nil || c["lastError"] != nil {
		t.Fatalf("before any report: %v", c)
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	report := func(status zonev1.CertificateStatus, expires time.Time, lastError string, at time.Time) {
		m := &zonev1.CertificateChanged{AppId: appID, Hostname: "shop.example.net", Zone: zone, Status: status, LastError: lastError, At: timestamppb.New(at)}
		if !expires.IsZero() {
			m.ExpiresAt = timestamppb.New(expires)
		}
		s.Deliver(s.Consumers.HandleCertificate, zonebus.KeyCertificateChanged, m)
	}
	failures := func() int {
		n := 0
		for _, k := range s.OutboxKeys() {
			if k == "apps.domain.certificate_failed" {
				n++
			}
		}
		return n
	}

	report(zonev1.CertificateStatus_CERTIFICATE_STATUS_FAILED, time.Time{}, "urn:ietf:params:acme:error:connection: refused", at)
	if c := cert(); c["status"] != "failed" || c["lastError"] != "urn:ietf:params:acme:error:connection: refused" || c["expiresAt"] != nil {
		t.Fatalf("failed: %v", c)
	}
	// The edge's retry fails again: the reason changes, nobody is mailed again.
	report(zonev1.CertificateStatus_CERTIFICATE_STATUS_FAILED, time.Time{}, "again", at.Add(time.Minute))
	if n := failures(); n != 1 {
		t.Fatalf("%d certificate_failed events after two failures in a row, want 1", n)
	}
	expires := at.Add(90 * 24 * time.Hour)
	report(zonev1.CertificateStatus_CERTIFICATE_STATUS_ISSUED, expires, "", at.Add(2*time.Minute))
	if c := cert(); c["status"] != "issued" || c["expiresAt"] != "2027-02-25T12:00:00.000Z" || c["lastError"] != nil {
		t.Fatalf("issued: %v", c)
	}
	// A report older than the one kept (another edge's, late) changes nothing.
	report(zonev1.CertificateStatus_CERTIFICATE_STATUS_PENDING, time.Time{}, "", at.Add(time.Minute))
	if c := cert(); c["status"] != "issued" {
		t.Fatalf("an older report won: %v", c)
	}
	// Issued, then failing once it expired: a new failure, told anew.
	report(zonev1.CertificateStatus_CERTIFICATE_STATUS_FAILED, time.Time{}, "ca down", expires.Add(time.Hour))
	if n := failures(); n != 2 {
		t.Fatalf("%d certificate_failed events, want 2", n)
	}
	// A report for a hostname the app does not have changes nothing and is not an error.
	s.Deliver(s.Consumers.HandleCertificate, zonebus.KeyCertificateChanged, &zonev1.CertificateChanged{AppId: appID, Hostname: "other.example.net",
		Zone: zone, Status: zonev1.CertificateStatus_CERTIFICATE_STATUS_ISSUED, At: timestamppb.New(at)})
	// Nor does another zone's word on this app's hostname.
	s.Deliver(s.Consumers.HandleCertificate, zonebus.KeyCertificateChanged, &zonev1.CertificateChanged{AppId: appID, Hostname: "shop.example.net",
		Zone: "elsewhere", Status: zonev1.CertificateStatus_CERTIFICATE_STATUS_ISSUED, At: timestamppb.New(expires.Add(2 * time.Hour))})
	if c := cert(); c["status"] != "failed" {
		t.Fatalf("another zone's report was kept: %v", c)
	}
}
