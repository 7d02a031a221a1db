// Package idempotency makes a POST safe to retry: a request carrying an Idempotency-Key acts
// once, and a retry with the same key and body gets the first answer again, as in Stripe's
// API. This file holds the rules; the stores keep the records.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"hash"
	"net/http"
	"time"
)

// Header is the request header that carries a key.
const Header = "Idempotency-Key"

// ReplayedHeader marks an answer that is a repeat of the first one.
const ReplayedHeader = "Idempotent-Replayed"

const (
	// TTL is how long a key is kept after its first request.
	TTL = 24 * time.Hour
	// Lease is how long a running request holds its key without renewing it. The request
	// renews it every Lease/3, so only a gateway that died lets it lapse.
	Lease = 30 * time.Second
	// MaxResponse is the largest answer kept. A larger one is not kept, and its key answers
	// 409 on reuse: repeating it is not possible and acting again is not safe.
	MaxResponse = 1 << 20
	// MaxKey is the longest key accepted.
	MaxKey = 255
)

// Errors a store returns.
var (
	// ErrLost means the request no longer holds its key (its lease lapsed and another took
	// it over); what it would have written is dropped.
	ErrLost = errors.New("idempotency: key no longer held")
)

// KeyHash identifies a key within its scope ("account:<id>" or "address:<ip>"): keys are per
// account, and per client address on the public routes. Only this hash is stored.
func KeyHash(scope, key string) []byte {
	h := sha256.New()
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return h.Sum(nil)
}

// ValidKey reports whether a header value can be a key: 1 to MaxKey printable ASCII characters.
func ValidKey(key string) bool {
	if len(key) == 0 || len(key) > MaxKey {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// Record is what is kept of a key.
type Record struct {
	Running     bool
	LeaseUntil  time.Time
	RequestHash []byte // of method, target and body; set once done
	Status      int
	ContentType string
	Body        []byte
	TooLarge    bool
}

// Answer is a finished request's answer as it is kept.
type Answer struct {
	RequestHash []byte
	Status      int
	ContentType string
	Body        []byte // nil when TooLarge
	TooLarge    bool
}

// Claim is a request's hold on its key while it runs.
type Claim struct {
	KeyHash []byte
	Owner   []byte // random, so only the holder may finish or release
}

// Store keeps records. Claim either takes the key (a new key, or one whose lease lapsed or
// whose TTL passed: ok true) or returns what is recorded under it.
type Store interface {
	Claim(ctx context.Context, keyHash []byte, lease time.Duration) (c Claim, ok bool, existing Record, err error)
	Renew(ctx context.Context, c Claim, lease time.Duration) error
	Finish(ctx context.Context, c Claim, a Answer) error
	Release(ctx context.Context, c Claim) error
	Prune(ctx context.Context) (int64, error)
}

// Verdict is what a request whose key is already recorded gets.
type Verdict int

const (
	// InProgress: the first request is still running: 409 request_in_progress.
	InProgress Verdict = iota
	// Replay: the same request again: the kept answer.
	Replay
	// Reused: another request under the same key: 409 idempotency_key_reused.
	Reused
	// NotKept: the same request, but its answer was too large to keep: 409, saying so.
	NotKept
)

// Judge decides, for a key held by another request, what this one gets. requestHash is
// asked for only when the record is done, so a request that will be refused as in progress
// never has its body read.
func Judge(r Record, requestHash func() ([]byte, error)) (Verdict, error) {
	if r.Running {
		return InProgress, nil
	}
	h, err := requestHash()
	if err != nil {
		return 0, err
	}
	switch {
	case !bytes.Equal(h, r.RequestHash):
		return Reused, nil
	case r.TooLarge:
		return NotKept, nil
	}
	return Replay, nil
}

// Keep reports whether an answer is kept: 2xx and 4xx answers are final; a 5xx (or no
// answer) may be retried with the same key and act then, and so may a 429 (a limit, such as
// deploy_limit_reached, that says "not now": the client's retry after Retry-After must be
// able to act). An answer is kept only when the service read the whole request (otherwise it
// answered without seeing it all, and the hash of what passed is not the request's) and the
// whole answer reached the client.
func Keep(status int, requestComplete, responseComplete bool) bool {
	final := status/100 == 2 || (status/100 == 4 && status != http.StatusTooManyRequests)
	return final && requestComplete && responseComplete
}

// Fingerprint hashes a request as a key's first use and its retries are compared: method,
// target (path and query) and body.
type Fingerprint struct{ h hash.Hash }

// NewFingerprint starts the hash of a request; its body is written to it as it passes.
func NewFingerprint(method, target string) *Fingerprint {
	f := &Fingerprint{h: sha256.New()}
	f.h.Write([]byte(method + " " + target + "\n"))
	return f
}

// Write adds body bytes.
func (f *Fingerprint) Write(p []byte) (int, error) { return f.h.Write(p) }

// Sum is the request's hash.
func (f *Fingerprint) Sum() []byte { return f.h.Sum(nil) }
