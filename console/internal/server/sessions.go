package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"sync"
	"time"
)

// Session is one signed-in browser: the API session token it acts with, which never leaves
// this server, and the CSRF token its page must echo on every state-changing call.
type Session struct {
	Token     string
	User      json.RawMessage
	ExpiresAt time.Time
	CSRF      string
}

// memoryStore keeps sessions in this process, keyed by a hash of the cookie's random id (so
// the map itself holds no usable cookie). A restart signs every browser out of the console;
// their API sessions then lapse at their own expiry. One process per console: a second replica
// would not know the first one's sessions.
type memoryStore struct {
	mu        sync.Mutex
	byID      map[[32]byte]Session
	now       func() time.Time
	lastSweep time.Time
}

func newMemoryStore(now func() time.Time) *memoryStore {
	return &memoryStore{byID: map[[32]byte]Session{}, now: now}
}

// Create keeps s under a new random id and answers the id (the cookie's value).
func (m *memoryStore) Create(s Session) string {
	id := randomToken()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	m.byID[sha256.Sum256([]byte(id))] = s
	return id
}

// Get answers the live session of id.
func (m *memoryStore) Get(id string) (Session, bool) {
	if id == "" {
		return Session{}, false
	}
	key := sha256.Sum256([]byte(id))
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[key]
	if ok && !m.now().Before(s.ExpiresAt) {
		delete(m.byID, key)
		return Session{}, false
	}
	return s, ok
}

// Delete forgets id's session.
func (m *memoryStore) Delete(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byID, sha256.Sum256([]byte(id)))
}

// sweepLocked drops expired sessions at most once a minute, so the map holds only live ones.
func (m *memoryStore) sweepLocked() {
	now := m.now()
	if now.Sub(m.lastSweep) < time.Minute {
		return
	}
	m.lastSweep = now
	for k, s := range m.byID {
		if !now.Before(s.ExpiresAt) {
			delete(m.byID, k)
		}
	}
}

// randomToken is 32 random bytes, base64url: a cookie id or a CSRF token.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
