package usecase

import (
	"context"
	"fmt"
	"time"
)

// HostnameFailing is an active custom hostname whose TXT record the apps service's daily
// re-check found missing (apps.domain.verification_failing). Apps knows the hostname and the
// account; identity knows the owner's address, so identity writes the mail.
type HostnameFailing struct {
	AccountID    string
	Slug         string
	Hostname     string
	RecordName   string
	RecordValue  string
	MissingSince time.Time
	DeactivateAt time.Time
}

// MailHostnameFailing tells the account's owner which record to put back and by when. An
// account identity does not know gets no mail (there is nobody to write to); a mail server
// that refuses makes the error ErrMailUnavailable, so the bus delivers the event again.
func (s *Service) MailHostnameFailing(ctx context.Context, repo Repo, h HostnameFailing) error {
	return s.mailOwner(ctx, repo, "hostname", h.AccountID, func() (Mail, error) {
		const when = "2006-01-02 15:04 UTC"
		msg := Mail{
			Subject: "Tori: the DNS record of a custom hostname is missing",
			Text: fmt.Sprintf("Tori could not find the DNS record that proves you control %s (app %s) when it\n"+
				"checked it at %s.\n\n"+
				"  Type:  TXT\n  Name:  %s\n  Value: %s\n\n"+
				"Put the record back before %s. If it is still missing then, Tori stops serving\n"+
				"%s and the hostname goes back to pending until the record is verified again.\n",
				h.Hostname, h.Slug, h.MissingSince.UTC().Format(when), h.RecordName, h.RecordValue,
				h.DeactivateAt.UTC().Format(when), h.Hostname),
		}
		return msg, nil
	})
}
