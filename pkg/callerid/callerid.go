// Package callerid carries the authenticated caller from the gateway to a service. The gateway
// signs the caller's identity into request headers with a key it shares with the services;
// a service trusts those headers only when the signature verifies, so a request that reaches
// a service directly cannot claim to be anyone.
package callerid

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header names. Services read only these; the gateway strips any inbound copies.
const (
	HeaderAccount   = "X-Tori-Account"
	HeaderUser      = "X-Tori-User"
	HeaderTokenKind = "X-Tori-Token-Kind"
	HeaderTokenID   = "X-Tori-Token-Id"
	// HeaderTeams lists the caller's teams and roles (EncodeTeams); HeaderScope is the token's
	// scope ("" for a session or a full token); HeaderApps the apps a pinned token is limited
	// to ("" unpinned); HeaderClientIP the address the gateway took the request from.
	HeaderTeams     = "X-Tori-Teams"
	HeaderScope     = "X-Tori-Scope"
	HeaderApps      = "X-Tori-Apps"
	HeaderClientIP  = "X-Tori-Client-Ip"
	HeaderTimestamp = "X-Tori-Timestamp"
	HeaderNonce     = "X-Tori-Nonce"
	HeaderSignature = "X-Tori-Signature"
	// HeaderBodyDigest is the signed statement about the body (body.go).
	HeaderBodyDigest = "X-Tori-Body-Digest"
	// HeaderBodySeal is the trailer of a streamed body: its digest, sealed to the signature.
	HeaderBodySeal = "X-Tori-Body-Seal"
	// HeaderDeclaredLength is a streamed body's length as the client declared it, for a
	// service's early refusal (the body itself goes chunked, to carry its trailer).
	HeaderDeclaredLength = "X-Tori-Declared-Length"
)

// AllHeaders lists every header this package writes.
var AllHeaders = []string{HeaderAccount, HeaderUser, HeaderTokenKind, HeaderTokenID, HeaderTeams, HeaderScope, HeaderApps, HeaderClientIP, HeaderTimestamp, HeaderNonce, HeaderSignature, HeaderBodyDigest, HeaderBodySeal, HeaderDeclaredLength}

// Token kinds.
const (
	KindSession = "session"
	KindAPI     = "api"
)

// Caller is who a request acts for. An unauthenticated request to a public route has an empty
// Caller, still signed, so a service can tell it came through the gateway.
type Caller struct {
	AccountID string
	UserID    string
	TokenKind string
	TokenID   string
	// Teams is the caller's teams with their current roles, encoded by EncodeTeams. Empty
	// from a signer that predates teams (tools, tests): the caller is then the owner of their
	// personal team, whose id is the account's (Principal).
	Teams string
	// Scope is a scoped token's scope; "" for a session or a full token.
	Scope string
	// Apps is a pinned token's apps, comma-separated; "" when not pinned.
	Apps     string
	ClientIP string
}

// Authenticated reports whether the caller presented a valid token.
func (c Caller) Authenticated() bool { return c.AccountID != "" }

// ErrInvalid means the headers are missing, stale or not signed by the gateway.
var ErrInvalid = errors.New("callerid: invalid or missing gateway signature")

// ErrReplay means the signature is valid but its nonce was already used.
var ErrReplay = errors.New("callerid: replayed gateway signature")

// MaxSkew bounds how old (or, for clocks apart, how new) a signature may be. Within it a
// service remembers every nonce it accepted, so a captured request cannot be sent again.
// The expiry of a nonce follows the signature's own timestamp (Nonces), so this is the
// whole window a replay store must cover.
const MaxSkew = 10 * time.Second

// Setter and Getter abstract over net/http and fasthttp headers.
type Setter func(key, value string)
type Getter func(key string) string

// Sign writes c's headers for a request with the given method, target host ("host:port", as
// the service will see it in Host) and request URI, its body left unbound (see SignBody: the
// gateway always binds the body; only holders of the key, tools and tests, sign this way).
// Each signature carries a fresh nonce, so no two signed requests are alike.
func Sign(key []byte, set Setter, c Caller, method, host, path string, now time.Time) {
	SignBody(key, set, c, method, host, path, now, "")
}

// SignBody is Sign with the request's body bound to the signature by digest: DigestOf(body)
// for a body known whole before sending, DigestTrailer for a body streamed with its Seal in
// the trailer. A captured request sent again with another body then fails verification.
func SignBody(key []byte, set Setter, c Caller, method, host, path string, now time.Time, digest string) {
	ts := strconv.FormatInt(now.Unix(), 10)
	nonce := newNonce()
	set(HeaderAccount, c.AccountID)
	set(HeaderUser, c.UserID)
	set(HeaderTokenKind, c.TokenKind)
	set(HeaderTokenID, c.TokenID)
	set(HeaderTeams, c.Teams)
	set(HeaderScope, c.Scope)
	set(HeaderApps, c.Apps)
	set(HeaderClientIP, c.ClientIP)
	set(HeaderTimestamp, ts)
	set(HeaderNonce, nonce)
	set(HeaderBodyDigest, digest)
	set(HeaderSignature, mac(key, c, method, host, path, ts, nonce, digest))
}

// Verify checks the headers of a request with the given method, Host and request URI and
// returns its caller. It does not remember nonces: a server verifies through a Nonces (the
// Fiber Middleware does), so that a replay is refused.
func Verify(key []byte, get Getter, method, host, path string, now time.Time) (Caller, error) {
	c := Caller{
		AccountID: get(HeaderAccount),
		UserID:    get(HeaderUser),
		TokenKind: get(HeaderTokenKind),
		TokenID:   get(HeaderTokenID),
		Teams:     get(HeaderTeams),
		Scope:     get(HeaderScope),
		Apps:      get(HeaderApps),
		ClientIP:  get(HeaderClientIP),
	}
	ts := get(HeaderTimestamp)
	nonce := get(HeaderNonce)
	digest := get(HeaderBodyDigest)
	sig := get(HeaderSignature)
	if ts == "" || sig == "" || len(nonce) != nonceLen {
		return Caller{}, ErrInvalid
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Caller{}, ErrInvalid
	}
	if d := now.Sub(time.Unix(secs, 0)); d > MaxSkew || d < -MaxSkew {
		return Caller{}, ErrInvalid
	}
	want := mac(key, c, method, host, path, ts, nonce, digest)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return Caller{}, ErrInvalid
	}
	return c, nil
}

// VerifyOnce is Verify followed by claiming the request's nonce in seen: a second request
// with the same signature is ErrReplay, and ErrNoncesFull when seen cannot take it.
func VerifyOnce(key []byte, seen *Nonces, get Getter, method, host, path string, now time.Time) (Caller, error) {
	c, err := Verify(key, get, method, host, path, now)
	if err != nil {
		return Caller{}, err
	}
	secs, _ := strconv.ParseInt(get(HeaderTimestamp), 10, 64) // Verify parsed it
	if err := seen.Claim(get(HeaderNonce), time.Unix(secs, 0), now); err != nil {
		return Caller{}, err
	}
	return c, nil
}

// nonceLen is the hex length of a nonce: 128 random bits.
const nonceLen = 32

func newNonce() string {
	var b [nonceLen / 2]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

func mac(key []byte, c Caller, method, host, path, ts, nonce, digest string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(strings.Join([]string{"v4", method, strings.ToLower(host), path, c.AccountID, c.UserID, c.TokenKind, c.TokenID, c.Teams, c.Scope, c.Apps, c.ClientIP, ts, nonce, digest}, "\n")))
	return hex.EncodeToString(h.Sum(nil))
}
