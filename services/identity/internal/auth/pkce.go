package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// MethodS256 is the only PKCE method accepted: "plain" would let anyone who sees the
// authorize request redeem the code.
const MethodS256 = "S256"

// ChallengeS256 is the S256 code challenge of a verifier (RFC 7636 §4.2).
func ChallengeS256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ValidVerifier checks RFC 7636 §4.1: 43 to 128 unreserved characters.
func ValidVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isUnreserved(v[i]) {
			return false
		}
	}
	return true
}

// ValidChallenge checks that c looks like an S256 challenge: base64url of 32 bytes.
func ValidChallenge(c string) bool {
	b, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil && len(b) == sha256.Size && len(c) == 43
}

// VerifyS256 reports whether verifier hashes to challenge, in constant time.
func VerifyS256(verifier, challenge string) bool {
	if !ValidVerifier(verifier) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(ChallengeS256(verifier)), []byte(challenge)) == 1
}

func isUnreserved(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
