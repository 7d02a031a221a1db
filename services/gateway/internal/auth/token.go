// Package auth turns a bearer token into the caller it stands for: identity introspects it,
// and the answer is cached only while revocations can reach this instance.
package auth

import (
	"errors"
	"fmt"
	"strings"

	"tori.dev/contract/names"
)

// Errors of authentication. The HTTP layer maps them in one place.
var (
	// ErrUnauthorized: the token is missing, malformed, unknown, revoked or expired.
	ErrUnauthorized = errors.New("auth: unauthorized")
	// ErrTokenExpired: an API token past the end it was created with. It is an
	// ErrUnauthorized (401, counted against the address's budget) the client is told about.
	ErrTokenExpired = fmt.Errorf("%w: token expired", ErrUnauthorized)
	// ErrUnavailable: identity could not answer, so the token is neither good nor bad.
	ErrUnavailable = errors.New("auth: identity unavailable")
)

// Token prefixes: session tokens from magic-link sign-in and API tokens, as identity issues
// them (contract/names).
const (
	SessionPrefix = names.SessionTokenPrefix
	APIPrefix     = names.APITokenPrefix
)

// maxTokenLen bounds what is hashed and sent to identity; real tokens are far shorter.
const maxTokenLen = 512

// BearerToken extracts the token from an Authorization header. It accepts only tokens that
// can be Tori's, so garbage never costs identity a round trip.
func BearerToken(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	if !strings.HasPrefix(tok, SessionPrefix) && !strings.HasPrefix(tok, APIPrefix) {
		return "", false
	}
	if len(tok) <= len(SessionPrefix) || len(tok) > maxTokenLen {
		return "", false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] > '~' {
			return "", false
		}
	}
	return tok, true
}
