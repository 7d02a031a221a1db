package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tori.dev/services/identity/internal/account"
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
	_, owner, err := repo.Account(ctx, h.AccountID)
	if errors.Is(err, account.ErrNotFound) {
		s.log.WarnContext(ctx, "hostname mail: no such account", "account_id", h.AccountID)
		return nil
	}
	if err != nil {
		return err
	}
	const when = "2006-01-02 15:04 UTC"
	msg := Mail{
		To:      owner.Email,
		Subject: "Tori: the DNS record of a custom hostname is missing",
		Text: fmt.Sprintf("Tori could not find the DNS record that proves you control %s (app %s) when it\n"+
			"checked it at %s.\n\n"+
			"  Type:  TXT\n  Name:  %s\n  Value: %s\n\n"+
			"Put the record back before %s. If it is still missing then, Tori stops serving\n"+
			"%s and the hostname goes back to pending until the record is verified again.\n",
			h.Hostname, h.Slug, h.MissingSince.UTC().Format(when), h.RecordName, h.RecordValue,
			h.DeactivateAt.UTC().Format(when), h.Hostname),
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		s.log.ErrorContext(ctx, "hostname mail not delivered", "err", err.Error())
		return fmt.Errorf("%w: %w", ErrMailUnavailable, err)
	}
	s.log.InfoContext(ctx, "hostname mail sent", "account_id", h.AccountID)
	return nil
}
