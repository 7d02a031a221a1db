package callerid

import (
	"strings"
	"sync"
	"time"
)

// DefaultMaxNonces bounds the nonces a service remembers: 2×MaxSkew of requests at about
// 6,500 a second, a few megabytes. Past it new requests are refused rather than letting
// memory grow or forgetting a nonce whose signature could still verify.
const DefaultMaxNonces = 1 << 17

// Nonces remembers the nonces of accepted signatures for as long as those signatures could
// verify, so each is accepted once.
type Nonces struct {
	mu    sync.Mutex
	max   int
	seen  map[string]struct{}
	order []seenNonce // in claim order, so expiry pops from the front
	head  int
}

type seenNonce struct {
	nonce string
	until time.Time
}

// NewNonces remembers at most max nonces at once.
func NewNonces(max int) *Nonces {
	if max <= 0 {
		max = DefaultMaxNonces
	}
	return &Nonces{max: max, seen: map[string]struct{}{}}
}

// Claim records nonce as used at now and reports whether it was new. A nonce is forgotten
// 2×MaxSkew after its claim: its signature, at most MaxSkew from now either way, is stale by
// then. When the set is full of live nonces, Claim refuses.
func (n *Nonces) Claim(nonce string, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.expire(now)
	if _, dup := n.seen[nonce]; dup {
		return false
	}
	if len(n.seen) >= n.max {
		return false
	}
	// A copy: the caller's string may alias a server's reused header buffer (fasthttp), and a
	// map key changing under the map would make later nonces look seen.
	nonce = strings.Clone(nonce)
	n.seen[nonce] = struct{}{}
	n.order = append(n.order, seenNonce{nonce: nonce, until: now.Add(2 * MaxSkew)})
	return true
}

// Len is how many nonces are remembered.
func (n *Nonces) Len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.seen)
}

func (n *Nonces) expire(now time.Time) {
	for n.head < len(n.order) && now.After(n.order[n.head].until) {
		delete(n.seen, n.order[n.head].nonce)
		n.order[n.head] = seenNonce{}
		n.head++
	}
	// Reuse the slice's front once half of it is spent, so it does not grow without end.
	if n.head > 0 && n.head >= len(n.order)/2 {
		n.order = append(n.order[:0], n.order[n.head:]...)
		n.head = 0
	}
}
