package usecase

import (
	"context"
	"fmt"
	"time"
)

// CertificateFailed is a custom hostname whose certificate the zone's edge could not obtain
// (apps.domain.certificate_failed): published once per failure, not for each retry.
type CertificateFailed struct {
	AccountID string
	Slug      string
	Hostname  string
	FailedAt  time.Time
}

// MailCertificateFailed tells the account's owner that visitors of the hostname get no
// certificate, and what usually causes it. The CA's own words are not quoted (they are the
// CA's and the DNS's, not Tori's): `tori domains` shows them. An account identity does not
// know gets no mail; a mail server that refuses makes the error ErrMailUnavailable, so the
// bus delivers the event again.
func (s *Service) MailCertificateFailed(ctx context.Context, repo Repo, c CertificateFailed) error {
	return s.mailOwner(ctx, repo, "certificate", c.AccountID, func() (Mail, error) {
		const when = "2006-01-02 15:04 UTC"
		msg := Mail{
			Subject: "Tori: no HTTPS certificate for a custom hostname yet",
			Text: fmt.Sprintf("Tori could not obtain an HTTPS certificate for %s (app %s) at %s, so\n"+
				"visitors reaching it over https:// get a certificate error.\n\n"+
				"The usual cause is DNS: %s must point at Tori (its A/AAAA or CNAME record),\n"+
				"so the certificate authority's check reaches Tori's edge. Tori keeps trying, less\n"+
				"and less often; once a try succeeds the site is served over HTTPS with no action\n"+
				"from you. `tori domains %s` shows the authority's reason for the last failure.\n\n"+
				"You get this mail once per failure, not for every retry.\n",
				c.Hostname, c.Slug, c.FailedAt.UTC().Format(when), c.Hostname, c.Slug),
		}
		return msg, nil
	})
}
