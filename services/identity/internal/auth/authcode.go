package auth

import "time"

// AuthCodeLifetime is how long a loopback authorization code works: the browser hands it to
// the local listener at once, so two minutes is generous (RFC 6749 suggests at most ten).
const AuthCodeLifetime = 2 * time.Minute

// maxStateLen bounds the client's opaque state.
const maxStateLen = 512

// AuthorizeRequest is the console's request to send an authorization code to a local CLI.
type AuthorizeRequest struct {
	RedirectURI         string
	State               string
	CodeChallenge       string
	CodeChallengeMethod string
}

// AuthCode is one loopback authorization code.
type AuthCode struct {
	Hash        []byte
	AccountID   string
	UserID      string
	RedirectURI string
	Challenge   string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	UsedAt      *time.Time
}

// Authorize checks req and issues a code for the account; redirectTo is where the console
// sends the browser: the redirect URI with code and state added to its query.
func Authorize(req AuthorizeRequest, accountID, userID string, now time.Time) (c AuthCode, redirectTo string, err error) {
	u, err := ParseRedirectURI(req.RedirectURI)
	if err != nil {
		return AuthCode{}, "", err
	}
	if req.CodeChallengeMethod != MethodS256 || !ValidChallenge(req.CodeChallenge) ||
		req.State == "" || len(req.State) > maxStateLen {
		return AuthCode{}, "", ErrInvalidRequest
	}
	sec := NewSecret("")
	q := u.Query()
	q.Set("code", sec.Plain)
	q.Set("state", req.State)
	u.RawQuery = q.Encode()
	return AuthCode{
		Hash:        sec.Hash,
		AccountID:   accountID,
		UserID:      userID,
		RedirectURI: req.RedirectURI,
		Challenge:   req.CodeChallenge,
		CreatedAt:   now,
		ExpiresAt:   now.Add(AuthCodeLifetime),
	}, u.String(), nil
}

// Redeem spends the code. Any attempt spends it, even one with a wrong verifier, so a stolen
// code cannot be tried twice. The caller saves the code whatever Redeem returns.
func (c *AuthCode) Redeem(verifier, redirectURI string, now time.Time) error {
	if c.UsedAt != nil {
		return ErrInvalidGrant
	}
	c.UsedAt = &now
	if !now.Before(c.ExpiresAt) {
		return ErrExpiredToken
	}
	if redirectURI != c.RedirectURI || !VerifyS256(verifier, c.Challenge) {
		return ErrInvalidGrant
	}
	return nil
}
