package usecase

import (
	"context"
	"errors"
	"fmt"

	"tori.dev/services/identity/internal/account"
)

// mailOwner sends the mail compose makes to the owners of ownerID, the one path every notice
// mail takes. ownerID is what billing and apps key a customer's things by: the owning team's
// id (a personal team's is its account's), so a team's notices reach each of its owners. An
// id identity does not know gets no mail (there is nobody to write to); a mail server that
// refuses makes the error ErrMailUnavailable, so the bus delivers the event again. kind names
// the mail in the log lines; attrs add to the line that says it went.
func (s *Service) mailOwner(ctx context.Context, repo Repo, kind, ownerID string, compose func() (Mail, error), attrs ...any) error {
	to, err := repo.OwnerEmails(ctx, ownerID)
	if err != nil {
		return err
	}
	if len(to) == 0 {
		// An account from before its personal team had members (or a store without teams).
		_, owner, err := repo.Account(ctx, ownerID)
		if errors.Is(err, account.ErrNotFound) {
			s.log.WarnContext(ctx, kind+" mail: no such team or account", "account_id", ownerID)
			return nil
		}
		if err != nil {
			return err
		}
		to = []string{owner.Email}
	}
	msg, err := compose()
	if err != nil {
		return err
	}
	for _, addr := range to {
		msg.To = addr
		if err := s.mailer.Send(ctx, msg); err != nil {
			s.log.ErrorContext(ctx, kind+" mail not delivered", "err", err.Error())
			return fmt.Errorf("%w: %w", ErrMailUnavailable, err)
		}
	}
	s.log.InfoContext(ctx, kind+" mail sent", append([]any{"account_id", ownerID, "recipients", len(to)}, attrs...)...)
	return nil
}
