package auth

import (
	"sync"
	"time"
)

// NegativeTTL is how long a token identity called unknown is answered 401 without asking
// again. A token cannot become valid later (identity mints each one fresh and shows it once),
// so the only cost of remembering is memory, which maxUnknown bounds.
const NegativeTTL = 30 * time.Second

// maxUnknown bounds the negative cache (about 100 bytes an entry). Past it, unknown tokens
// are introspected again until entries expire: the per-address 401 budget still holds them.
const maxUnknown = 100_000

// Unknown remembers hashes of tokens identity refused, so that random `svc_` strings sent
// over and over do not each cost identity a query, and with each its refusal, so that an
// expired token is answered token_expired again rather than a bare 401.
type Unknown struct {
	mu    sync.Mutex
	ttl   time.Duration
	until map[Hash]refusal
	order []unknownEntry
	head  int
}

type refusal struct {
	until time.Time
	err   error
}

type unknownEntry struct {
	h     Hash
	until time.Time
}

// NewUnknown remembers refused tokens for ttl (0 or less: NegativeTTL).
func NewUnknown(ttl time.Duration) *Unknown {
	if ttl <= 0 {
		ttl = NegativeTTL
	}
	return &Unknown{ttl: ttl, until: map[Hash]refusal{}}
}

// Has reports whether h was refused less than the TTL before now.
func (u *Unknown) Has(h Hash, now time.Time) bool { return u.Refusal(h, now) != nil }

// Refusal is the error h was refused with, if that was less than the TTL before now; nil
// when h is not remembered.
func (u *Unknown) Refusal(h Hash, now time.Time) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.expire(now)
	r, ok := u.until[h]
	if !ok || !now.Before(r.until) {
		return nil
	}
	return r.err
}

// Add remembers h as refused at now with ErrUnauthorized.
func (u *Unknown) Add(h Hash, now time.Time) { u.AddRefusal(h, now, ErrUnauthorized) }

// AddRefusal remembers h as refused at now with err (ErrUnauthorized or ErrTokenExpired).
func (u *Unknown) AddRefusal(h Hash, now time.Time, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.expire(now)
	if _, ok := u.until[h]; ok || len(u.until) >= maxUnknown {
		return
	}
	t := now.Add(u.ttl)
	u.until[h] = refusal{until: t, err: err}
	u.order = append(u.order, unknownEntry{h: h, until: t})
}

// Len is how many refused tokens are remembered.
func (u *Unknown) Len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.until)
}

// expire drops entries past their time; they were added in time order, so from the front.
func (u *Unknown) expire(now time.Time) {
	for u.head < len(u.order) && !now.Before(u.order[u.head].until) {
		delete(u.until, u.order[u.head].h)
		u.order[u.head] = unknownEntry{}
		u.head++
	}
	if u.head > 0 && u.head >= len(u.order)/2 {
		u.order = append(u.order[:0], u.order[u.head:]...)
		u.head = 0
	}
}
