package domains

import "time"

// Statuses of a hostname's certificate at the edge.
const (
	CertificatePending = "pending"
	CertificateIssued  = "issued"
	CertificateFailed  = "failed"
)

// Certificate is a hostname's certificate as the zone last reported it.
type Certificate struct {
	// Status is pending, issued or failed; empty before the zone's first report.
	Status    string
	ExpiresAt *time.Time
	LastError string
}

// Shown is the certificate as the API shows it: pending until the zone says otherwise.
func (c Certificate) Shown() Certificate {
	if c.Status == "" {
		c.Status = CertificatePending
	}
	return c
}

// CertificateChange is a report saved over the one before it.
type CertificateChange struct {
	Previous  string // the status before ("" for none)
	AccountID string
	Slug      string
}

// MailsOwner reports whether moving from status previous to next tells the owner: a move
// into failed does, once; the edge's retries while it stays failed do not, and a failure
// after an issue (a new episode) does again.
func MailsOwner(previous, next string) bool {
	return next == CertificateFailed && previous != CertificateFailed
}
