package usecase

import (
	"context"
	"errors"
	"fmt"

	"tori.dev/services/identity/internal/account"
)

// mailOwner sends the mail compose makes to accountID's owner, the one path every notice
// mail takes. An account identity does not know gets no mail (there is nobody to write to);
// a mail server that refuses makes the error ErrMailUnavailable, so the bus delivers the
// event again. kind names the mail in the log lines; attrs add to the line that says it went.
func (s *Service) mailOwner(ctx context.Context, repo Repo, kind, accountID string, compose func() (Mail, error), attrs ...any) error {
	_, owner, err := repo.Account(ctx, accountID)
	if errors.Is(err, account.ErrNotFound) {
		s.log.WarnContext(ctx, kind+" mail: no such account", "account_id", accountID)
		return nil
	}
	if err != nil {
		return err
	}
	msg, err := compose()
	if err != nil {
		return err
	}
	msg.To = owner.Email
	if err := s.mailer.Send(ctx, msg); err != nil {
		s.log.ErrorContext(ctx, kind+" mail not delivered", "err", err.Error())
		return fmt.Errorf("%w: %w", ErrMailUnavailable, err)
	}
	s.log.InfoContext(ctx, kind+" mail sent", append([]any{"account_id", accountID}, attrs...)...)
	return nil
}
