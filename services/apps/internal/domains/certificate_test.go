package domains_test

import (
	"testing"

	"tori.dev/services/apps/internal/domains"
)

func TestCertificateFailureMailsOnce(t *testing.T) {
	for _, tc := range []struct {
		previous, next string
		mails          bool
	}{
		{"", domains.CertificateFailed, true},
		{domains.CertificatePending, domains.CertificateFailed, true},
		{domains.CertificateIssued, domains.CertificateFailed, true},
		{domains.CertificateFailed, domains.CertificateFailed, false}, // a retry that failed again
		{domains.CertificateFailed, domains.CertificateIssued, false},
		{domains.CertificatePending, domains.CertificateIssued, false},
		{"", domains.CertificatePending, false},
	} {
		if got := domains.MailsOwner(tc.previous, tc.next); got != tc.mails {
			t.Errorf("MailsOwner(%q, %q) = %v, want %v", tc.previous, tc.next, got, tc.mails)
		}
	}
	if s := (domains.Certificate{}).Shown().Status; s != domains.CertificatePending {
		t.Fatalf("no report shows %q, want pending", s)
	}
}
