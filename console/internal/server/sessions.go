package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// Session is one signed-in browser: the API session token it acts with, which never leaves
// this server, and the CSRF token its page must echo on every state-changing call.
type Session struct {
	Token     string          `json:"token"`
	User      json.RawMessage `json:"user"`
	ExpiresAt time.Time       `json:"expiresAt"`
	CSRF      string          `json:"csrf"`
}

// SessionStore keeps sessions under the cookie's random id (a 256-bit secret only the
// browser holds). Get answers ok=false for an unknown or expired id.
type SessionStore interface {
	Create(ctx context.Context, s Session) (id string, err error)
	Get(ctx context.Context, id string) (s Session, ok bool, err error)
	Delete(ctx context.Context, id string) error
}

// errStoreUnavailable is a store that could not answer (Redis down): the page is told to try
// again, never signed out by it.
var errStoreUnavailable = errors.New("session store unavailable")

// lookupKey is what a store files a session under: a hash of the cookie's id, so the store's
// keys are no usable cookies.
func lookupKey(id string) string {
	h := sha256.Sum256([]byte("tori-console-lookup:" + id))
	return hex.EncodeToString(h[:])
}

// memoryStore keeps sessions in this process. A restart signs every browser out of the
// console (their API sessions lapse at their own expiry), and a second replica would not know
// the first one's sessions: CONSOLE_SESSION_STORE=redis is for those.
type memoryStore struct {
	mu        sync.Mutex
	byKey     map[string]Session
	now       func() time.Time
	lastSweep time.Time
}

func newMemoryStore(now func() time.Time) *memoryStore {
	return &memoryStore{byKey: map[string]Session{}, now: now}
}

func (m *memoryStore) Create(_ context.Context, s Session) (string, error) {
	id := randomToken()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	m.byKey[lookupKey(id)] = s
	return id, nil
}

func (m *memoryStore) Get(_ context.Context, id string) (Session, bool, error) {
	if id == "" {
		return Session{}, false, nil
	}
	key := lookupKey(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byKey[key]
	if ok && !m.now().Before(s.ExpiresAt) {
		delete(m.byKey, key)
		return Session{}, false, nil
	}
	return s, ok, nil
}

func (m *memoryStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byKey, lookupKey(id))
	return nil
}

// sweepLocked drops expired sessions at most once a minute, so the map holds only live ones.
func (m *memoryStore) sweepLocked() {
	now := m.now()
	if now.Sub(m.lastSweep) < time.Minute {
		return
	}
	m.lastSweep = now
	for k, s := range m.byKey {
		if !now.Before(s.ExpiresAt) {
			delete(m.byKey, k)
		}
	}
}

// randomToken is 32 random bytes, base64url: a cookie id or a CSRF token.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
