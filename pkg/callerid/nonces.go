package callerid

import (
	"errors"
	"strings"
	"sync"
	"time"
)

// ErrNoncesFull means the replay store could not take another nonce: the request is refused
// as unavailable (503), never as unauthorized, since nothing is wrong with its credentials.
var ErrNoncesFull = errors.New("callerid: replay store full")

// DefaultMaxNonces bounds the nonces one service process remembers. A nonce is kept only
// while its signature's timestamp can still verify (MaxSkew either way, so at most 2×MaxSkew
// + 1 s of timestamps, in one-second buckets); the store therefore holds what the process
// admitted over about 21 s. Sizing: the gateway's limits admit per client address 600
// reads and 120 writes a minute per account and operation, 600 a minute per public
// operation, and the auth buckets; what one replica can serve is far below what many
// addresses together are admitted, so the bound follows the service's own ceiling instead:
// about 25,000 requests a second sustained over the window (a forwarded read costs a
// service tens of microseconds on two cores), 2^19 nonces of ~100 bytes, about 50 MiB at
// the very worst. Past it a request answers 503 service_unavailable and room comes back
// within a second as the oldest bucket goes stale (docs/conventions.md, "Gateway to service").
const DefaultMaxNonces = 1 << 19

// Nonces remembers the nonces of accepted signatures for as long as those signatures could
// verify, so each is accepted once. Nonces are kept in buckets by their signature's second,
// and a bucket goes as soon as every signature in it is older than MaxSkew.
type Nonces struct {
	mu      sync.Mutex
	max     int
	n       int
	buckets map[int64]map[string]struct{} // signature's unix second -> nonces
}

// NewNonces remembers at most max nonces at once (0 or less: DefaultMaxNonces).
func NewNonces(max int) *Nonces {
	if max <= 0 {
		max = DefaultMaxNonces
	}
	return &Nonces{max: max, buckets: map[int64]map[string]struct{}{}}
}

// Claim records nonce, of a signature made at signed, as used at now. It returns ErrReplay
// when the nonce was claimed before and ErrNoncesFull when the store holds max live nonces.
func (n *Nonces) Claim(nonce string, signed, now time.Time) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.expire(now)
	sec := signed.Unix()
	b := n.buckets[sec]
	if _, dup := b[nonce]; dup {
		return ErrReplay
	}
	if n.n >= n.max {
		return ErrNoncesFull
	}
	if b == nil {
		b = map[string]struct{}{}
		n.buckets[sec] = b
	}
	// A copy: the caller's string may alias a server's reused header buffer (fasthttp), and a
	// map key changing under the map would make later nonces look seen.
	b[strings.Clone(nonce)] = struct{}{}
	n.n++
	return nil
}

// Len is how many nonces are remembered.
func (n *Nonces) Len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.n
}

// expire drops the buckets whose signatures Verify would refuse as stale at now. There are
// at most 2×MaxSkew+1 buckets, so the walk is short.
func (n *Nonces) expire(now time.Time) {
	for sec, b := range n.buckets {
		if stale(sec, now) {
			n.n -= len(b)
			delete(n.buckets, sec)
		}
	}
}

// stale reports whether a signature made in second sec can no longer verify at now.
func stale(sec int64, now time.Time) bool { return now.Sub(time.Unix(sec, 0)) > MaxSkew }
