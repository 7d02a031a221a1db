package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"tori.dev/contract/names"
)

// Token prefixes the contract fixes (contract/names), so a client and the gateway can tell
// the kinds apart.
const (
	SessionPrefix = names.SessionTokenPrefix
	APIPrefix     = names.APITokenPrefix
)

// secretBytes of randomness: 256 bits, so a hash without a salt or a slow KDF is enough; no
// one can guess or precompute such a secret.
const secretBytes = 32

// Secret is a freshly made secret: Plain goes to the client once, Hash is all that is kept.
type Secret struct {
	Plain string
	Hash  []byte
}

// NewSecret makes a URL-safe random secret starting with prefix.
func NewSecret(prefix string) Secret {
	b := make([]byte, secretBytes)
	// crypto/rand.Read never fails on supported platforms (it panics instead).
	_, _ = rand.Read(b)
	plain := prefix + base64.RawURLEncoding.EncodeToString(b)
	return Secret{Plain: plain, Hash: Hash(plain)}
}

// Hash is the stored form of a secret.
func Hash(plain string) []byte {
	h := sha256.Sum256([]byte(plain))
	return h[:]
}

// DisplayPrefix is what the token list shows of a secret: its first 8 characters, enough to
// recognise a token and far too few to use it.
func DisplayPrefix(plain string) string {
	if len(plain) <= 8 {
		return plain
	}
	return plain[:8]
}

// Kind tells a bearer token's kind by its prefix: "session", "api", or "" for neither.
func Kind(token string) string {
	switch {
	case strings.HasPrefix(token, SessionPrefix):
		return KindSession
	case strings.HasPrefix(token, APIPrefix):
		return KindAPI
	}
	return ""
}

// Token kinds, as the gateway's introspection answer and callerid name them.
const (
	KindSession = "session"
	KindAPI     = "api"
)
