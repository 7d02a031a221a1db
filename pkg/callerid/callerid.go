// Package callerid carries the authenticated caller from the gateway to a service. The gateway
// signs the caller's identity into request headers with a key it shares with the services;
// a service trusts those headers only when the signature verifies, so a request that reaches
// a service directly cannot claim to be anyone.
package callerid

import (
	"crypto/hmac"
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
	HeaderTimestamp = "X-Tori-Timestamp"
	HeaderSignature = "X-Tori-Signature"
)

// AllHeaders lists every header this package writes.
var AllHeaders = []string{HeaderAccount, HeaderUser, HeaderTokenKind, HeaderTokenID, HeaderTimestamp, HeaderSignature}

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
}

// Authenticated reports whether the caller presented a valid token.
func (c Caller) Authenticated() bool { return c.AccountID != "" }

// ErrInvalid means the headers are missing, stale or not signed by the gateway.
var ErrInvalid = errors.New("callerid: invalid or missing gateway signature")

// MaxSkew bounds how old a signature may be; it limits replay of captured internal requests.
const MaxSkew = 5 * time.Minute

// Setter and Getter abstract over net/http and fasthttp headers.
type Setter func(key, value string)
type Getter func(key string) string

// Sign writes c's headers for a request with the given method and path.
func Sign(key []byte, set Setter, c Caller, method, path string, now time.Time) {
	ts := strconv.FormatInt(now.Unix(), 10)
	set(HeaderAccount, c.AccountID)
	set(HeaderUser, c.UserID)
	set(HeaderTokenKind, c.TokenKind)
	set(HeaderTokenID, c.TokenID)
	set(HeaderTimestamp, ts)
	set(HeaderSignature, mac(key, c, method, path, ts))
}

// Verify checks the headers of a request with the given method and path and returns its caller.
func Verify(key []byte, get Getter, method, path string, now time.Time) (Caller, error) {
	c := Caller{
		AccountID: get(HeaderAccount),
		UserID:    get(HeaderUser),
		TokenKind: get(HeaderTokenKind),
		TokenID:   get(HeaderTokenID),
	}
	ts := get(HeaderTimestamp)
	sig := get(HeaderSignature)
	if ts == "" || sig == "" {
		return Caller{}, ErrInvalid
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Caller{}, ErrInvalid
	}
	if d := now.Sub(time.Unix(secs, 0)); d > MaxSkew || d < -MaxSkew {
		return Caller{}, ErrInvalid
	}
	want := mac(key, c, method, path, ts)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return Caller{}, ErrInvalid
	}
	return c, nil
}

func mac(key []byte, c Caller, method, path, ts string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(strings.Join([]string{"v1", method, path, c.AccountID, c.UserID, c.TokenKind, c.TokenID, ts}, "\n")))
	return hex.EncodeToString(h.Sum(nil))
}
