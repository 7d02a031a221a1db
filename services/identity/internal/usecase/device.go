package usecase

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/auth"
)

// DefaultClientName labels the API token a command-line sign-in mints when the client gave no
// name.
const DefaultClientName = "Tori CLI"

// DeviceStart is the answer to a device authorization request (RFC 8628 §3.2).
type DeviceStart struct {
	DeviceCode              string
	UserCode                string
	VerificationURI         string
	VerificationURIComplete string
	ExpiresIn               int // seconds
	Interval                int // seconds
}

// IssuedToken is an API token minted by a command-line sign-in; the secret is shown once.
type IssuedToken struct {
	Token   string
	TokenID string
}

// userCodeAttempts bounds redraws after a user-code collision, which is already rare.
const userCodeAttempts = 5

// StartDevice opens a device grant.
func (s *Service) StartDevice(ctx context.Context, clientName string) (DeviceStart, error) {
	name := clientLabel(clientName)
	for range userCodeAttempts {
		g, deviceCode, userCode := auth.NewDeviceGrant(name, s.now())
		created, err := s.store.CreateDeviceGrant(ctx, g)
		if err != nil {
			return DeviceStart{}, fmt.Errorf("save device grant: %w", err)
		}
		if !created {
			continue
		}
		// The console's device page, as decisions.md names it.
		page := s.console + "/device"
		return DeviceStart{
			DeviceCode:              deviceCode,
			UserCode:                userCode,
			VerificationURI:         page,
			VerificationURIComplete: page + "?user_code=" + url.QueryEscape(userCode),
			ExpiresIn:               int(auth.DeviceCodeLifetime.Seconds()),
			Interval:                int(g.Interval.Seconds()),
		}, nil
	}
	return DeviceStart{}, errors.New("device grant: no free user code")
}

// clientLabel makes the client's self-chosen name a safe token label.
func clientLabel(name string) string {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) {
		return DefaultClientName
	}
	if r := []rune(name); len(r) > 100 {
		name = string(r[:100])
	}
	return name
}

// ApproveDevice lets the device holding userCode sign in as the caller's account. Only a
// session may approve: an API token must never mint another.
func (s *Service) ApproveDevice(ctx context.Context, c callerid.Caller, userCode string) error {
	return s.decideDevice(ctx, c, userCode, func(g *auth.DeviceGrant) error {
		return g.Approve(c.AccountID, c.UserID, s.now())
	})
}

// DenyDevice refuses the grant; the device's next poll answers access_denied.
func (s *Service) DenyDevice(ctx context.Context, c callerid.Caller, userCode string) error {
	return s.decideDevice(ctx, c, userCode, func(g *auth.DeviceGrant) error {
		return g.Deny(s.now())
	})
}

func (s *Service) decideDevice(ctx context.Context, c callerid.Caller, userCode string, decide func(*auth.DeviceGrant) error) error {
	if c.TokenKind != callerid.KindSession {
		return auth.ErrSessionRequired
	}
	code, err := auth.NormalizeUserCode(userCode)
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(tx Repo) error {
		g, err := tx.LockDeviceGrantByUserCode(ctx, auth.Hash(code))
		if errors.Is(err, auth.ErrNotFound) {
			return auth.ErrInvalidUserCode
		}
		if err != nil {
			return err
		}
		if err := decide(&g); err != nil {
			return err
		}
		return tx.SaveDeviceGrant(ctx, g)
	})
}

// ExchangeDeviceCode is the device's poll. An answered poll changes the grant (its poll time)
// even when it is refused, so the change commits and the refusal is returned after.
func (s *Service) ExchangeDeviceCode(ctx context.Context, deviceCode string) (IssuedToken, error) {
	now := s.now()
	var out IssuedToken
	var refusal error
	err := s.store.InTx(ctx, func(tx Repo) error {
		g, err := tx.LockDeviceGrantByDeviceCode(ctx, auth.Hash(deviceCode))
		if errors.Is(err, auth.ErrNotFound) {
			return auth.ErrUnknownCode
		}
		if err != nil {
			return err
		}
		if refusal = g.Poll(now); refusal == nil {
			t, secret := auth.NewAPIToken(g.AccountID, g.UserID, g.ClientName, now)
			if err := tx.CreateAPIToken(ctx, t); err != nil {
				return err
			}
			g.Issue(t.ID)
			out = IssuedToken{Token: secret, TokenID: t.ID}
		}
		if errors.Is(refusal, auth.ErrSlowDown) {
			return nil // a refused poll changes nothing; a hammering client costs no writes
		}
		return tx.SaveDeviceGrant(ctx, g)
	})
	if err != nil {
		return IssuedToken{}, err
	}
	return out, refusal
}
