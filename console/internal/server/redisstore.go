package server

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

const redisPrefix = "tori:console:session:"

// redisStore keeps sessions in Redis, so they survive a restart and every replica of the
// console sees them. Each value is sealed (AES-256-GCM) with a key derived from the cookie's
// id, which only the browser holds: Redis, its dumps and its replicas hold no usable API
// token. A key expires with its session.
type redisStore struct {
	rdb *redis.Client
	now func() time.Time
}

func newRedisStore(rdb *redis.Client, now func() time.Time) *redisStore {
	return &redisStore{rdb: rdb, now: now}
}

func sealer(id string) (cipher.AEAD, error) {
	key := sha256.Sum256([]byte("tori-console-seal:" + id))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (r *redisStore) Create(ctx context.Context, s Session) (string, error) {
	ttl := s.ExpiresAt.Sub(r.now())
	if ttl <= 0 {
		return "", errors.New("session already expired")
	}
	id := randomToken()
	plain, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	aead, err := sealer(id)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, plain, []byte(lookupKey(id)))
	if err := r.rdb.Set(ctx, redisPrefix+lookupKey(id), sealed, ttl).Err(); err != nil {
		return "", fmt.Errorf("%w: %v", errStoreUnavailable, err)
	}
	return id, nil
}

func (r *redisStore) Get(ctx context.Context, id string) (Session, bool, error) {
	if id == "" {
		return Session{}, false, nil
	}
	sealed, err := r.rdb.Get(ctx, redisPrefix+lookupKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Session{}, false, nil
	}
	if err != nil {
		return Session{}, false, fmt.Errorf("%w: %v", errStoreUnavailable, err)
	}
	aead, err := sealer(id)
	if err != nil || len(sealed) < aead.NonceSize() {
		return Session{}, false, nil
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(lookupKey(id)))
	if err != nil {
		return Session{}, false, nil
	}
	var s Session
	if err := json.Unmarshal(plain, &s); err != nil || !r.now().Before(s.ExpiresAt) {
		return Session{}, false, nil
	}
	return s, true, nil
}

func (r *redisStore) Delete(ctx context.Context, id string) error {
	if err := r.rdb.Del(ctx, redisPrefix+lookupKey(id)).Err(); err != nil {
		return fmt.Errorf("%w: %v", errStoreUnavailable, err)
	}
	return nil
}
