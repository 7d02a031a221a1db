package usecase

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"tori.dev/pkg/callerid"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/auth"
)

// SignIn is the result of a verified magic link: a session token, shown once.
type SignIn struct {
	Token   string
	Session auth.Session
	User    account.User
}

// RequestMagicLink mails a sign-in link to email. It answers the same whether or not the
// address has an account, so the route cannot be used to find customers.
func (s *Service) RequestMagicLink(ctx context.Context, email string) error {
	email, err := account.ParseEmail(email)
	if err != nil {
		return err
	}
	now := s.now()
	m, code := auth.NewMagicLink(email, now)
	send := false
	// One address at a time, so concurrent requests cannot both pass the count.
	err = s.store.InTx(ctx, func(tx Repo) error {
		if err := tx.LockEmail(ctx, email); err != nil {
			return err
		}
		sent, err := tx.CountMagicLinksSince(ctx, email, now.Add(-auth.MagicLinkWindow))
		if err != nil {
			return err
		}
		if send = auth.MayMailMagicLink(sent); !send {
			return nil
		}
		return tx.CreateMagicLink(ctx, m)
	})
	if err != nil {
		return fmt.Errorf("save magic link: %w", err)
	}
	if !send {
		// Answered as if sent: the route must not tell whether an address gets mail.
		s.log.InfoContext(ctx, "sign-in mail withheld: the address had its share of this window")
		return nil
	}
	msg := Mail{
		To:      email,
		Subject: "Sign in to Tori",
		Text: "Open this link to sign in to Tori:\n\n" +
			s.console + "/auth/verify?token=" + url.QueryEscape(code) + "\n\n" +
			"The link works once, within 15 minutes. If you did not ask to sign in, ignore this mail.\n",
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		// The error names the mail server at most; never the link.
		s.log.ErrorContext(ctx, "sign-in mail not delivered", "err", err.Error())
		return ErrMailUnavailable
	}
	return nil
}

// VerifyMagicLink redeems a code and starts a session. The first sign-in of an address
// creates its account (nestling, default region eu) and reports it to the other services.
func (s *Service) VerifyMagicLink(ctx context.Context, code string) (SignIn, error) {
	if code == "" {
		return SignIn{}, auth.ErrInvalidToken
	}
	now := s.now()
	var out SignIn
	err := s.store.InTx(ctx, func(tx Repo) error {
		m, err := tx.LockMagicLink(ctx, auth.Hash(code))
		if errors.Is(err, auth.ErrNotFound) {
			return auth.ErrInvalidToken
		}
		if err != nil {
			return err
		}
		if err := m.Redeem(now); err != nil {
			return err
		}
		if err := tx.SaveMagicLink(ctx, m); err != nil {
			return err
		}
		u, err := s.userFor(ctx, tx, m.Email, now)
		if err != nil {
			return err
		}
		sess, token := auth.NewSession(u.AccountID, u.ID, now)
		if err := tx.CreateSession(ctx, sess); err != nil {
			return err
		}
		out = SignIn{Token: token, Session: sess, User: u}
		return nil
	})
	return out, err
}

// userFor finds the address's user or creates its account.
func (s *Service) userFor(ctx context.Context, tx Repo, email string, now time.Time) (account.User, error) {
	if err := tx.LockEmail(ctx, email); err != nil {
		return account.User{}, err
	}
	u, err := tx.UserByEmail(ctx, email)
	if !errors.Is(err, account.ErrNotFound) {
		return u, err
	}
	acc, u := account.New(email, now)
	if err := tx.CreateAccount(ctx, acc, u); err != nil {
		return account.User{}, err
	}
	if err := tx.Publish(ctx, identitybus.KeyAccountCreated, accountCreated(acc, u)); err != nil {
		return account.User{}, err
	}
	// The personal team carries the account's apps and plan; its id is the account's.
	if err := createPersonalTeam(ctx, tx, acc, u); err != nil {
		return account.User{}, err
	}
	s.log.InfoContext(ctx, "account created", "account_id", acc.ID)
	return u, nil
}

// Logout ends the session the caller presented.
func (s *Service) Logout(ctx context.Context, c callerid.Caller) error {
	if c.TokenKind != callerid.KindSession {
		return auth.ErrSessionRequired
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Repo) error {
		revoked, err := tx.RevokeSession(ctx, c.AccountID, c.TokenID, now)
		if err != nil || !revoked {
			return err
		}
		return tx.Publish(ctx, identitybus.KeyTokenRevoked, tokenRevoked(c.AccountID, c.TokenID, now))
	})
}
