package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CertStorage is certmagic's Storage in the zone's schema: every edge of the zone reads and
// writes the same certificates, keys and ACME accounts, and their Lock is a Postgres advisory
// lock, so two edges that want the same certificate order it once (the second finds it stored
// when the lock is its). Values are sealed at rest with AES-GCM.
type CertStorage struct {
	pool *pgxpool.Pool
	aead cipher.AEAD

	mu    sync.Mutex
	locks map[string]*pgx.Conn // name → the session holding its advisory lock
}

var _ certmagic.Storage = (*CertStorage)(nil)

// ErrStorageKey is a ZONE_TLS_STORAGE_KEY that is not 32 bytes.
var ErrStorageKey = errors.New("the TLS storage key must be 32 bytes (ZONE_TLS_STORAGE_KEY, base64)")

// lockClass is the first half of the two-key advisory lock: it keeps certificate locks apart
// from any other advisory lock of the database.
const lockClass = 0x7431 // "t1"

// NewCertStorage seals values with key (32 bytes, AES-256-GCM).
func NewCertStorage(pool *pgxpool.Pool, key []byte) (*CertStorage, error) {
	if len(key) != 32 {
		return nil, ErrStorageKey
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &CertStorage{pool: pool, aead: aead, locks: map[string]*pgx.Conn{}}, nil
}

func (s *CertStorage) seal(key string, value []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, value, []byte(key))
}

func (s *CertStorage) open(key string, sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, fmt.Errorf("tls object %q: sealed value too short", key)
	}
	v, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(key))
	if err != nil {
		return nil, fmt.Errorf("tls object %q does not open with the storage key", key)
	}
	return v, nil
}

// Store puts value at key.
func (s *CertStorage) Store(ctx context.Context, key string, value []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO tls_objects (key, value, modified) VALUES ($1, $2, now())
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, modified = now()`, key, s.seal(key, value))
	return err
}

// Load reads key; fs.ErrNotExist when there is none.
func (s *CertStorage) Load(ctx context.Context, key string) ([]byte, error) {
	var sealed []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM tls_objects WHERE key = $1`, key).Scan(&sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, err
	}
	return s.open(key, sealed)
}

// likePrefix is the LIKE pattern of the keys under dir.
func likePrefix(dir string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(strings.TrimSuffix(dir, "/")) + "/%"
}

// Delete removes key and, as for a folder, every key under it.
func (s *CertStorage) Delete(ctx context.Context, key string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM tls_objects WHERE key = $1 OR key LIKE $2`, key, likePrefix(key))
	return err
}

// Exists reports whether key is stored, as a value or as a folder of others.
func (s *CertStorage) Exists(ctx context.Context, key string) bool {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tls_objects WHERE key = $1 OR key LIKE $2)`, key, likePrefix(key)).Scan(&ok)
	return err == nil && ok
}

// List names the keys under dir: all of them when recursive, else its direct children
// (values and folders).
func (s *CertStorage) List(ctx context.Context, dir string, recursive bool) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT key FROM tls_objects WHERE key LIKE $1`, likePrefix(dir))
	if err != nil {
		return nil, err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fs.ErrNotExist
	}
	base := strings.TrimSuffix(dir, "/") + "/"
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		if !recursive {
			rest := strings.TrimPrefix(k, base)
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				k = base + rest[:i]
			}
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Stat describes key: a value with its size and time, or a folder.
func (s *CertStorage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	var sealed []byte
	var modified time.Time
	err := s.pool.QueryRow(ctx, `SELECT value, modified FROM tls_objects WHERE key = $1`, key).Scan(&sealed, &modified)
	if err == nil {
		return certmagic.KeyInfo{Key: key, Modified: modified, Size: int64(len(sealed) - s.aead.NonceSize() - s.aead.Overhead()), IsTerminal: true}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return certmagic.KeyInfo{}, err
	}
	if s.Exists(ctx, key) {
		return certmagic.KeyInfo{Key: key}, nil
	}
	return certmagic.KeyInfo{}, fs.ErrNotExist
}

// Lock takes the zone-wide lock name, waiting until it is free or ctx ends. It is a session
// advisory lock held by a connection of its own, opened with the pool's settings but outside
// it, until Unlock: an edge that dies lets go of it with its session, so no lock outlives its
// holder; and locks held while certmagic nests them (an order's, the ACME account's) never
// take the pool's connections, which the work under them needs (with the pool's, as many
// concurrent orders as the pool has connections stalled every one).
func (s *CertStorage) Lock(ctx context.Context, name string) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext(current_schema() || ':' || $2))`, lockClass, name); err != nil {
		// The session may hold it if the wait was cancelled after the grant: closing ends it.
		conn.Close(context.WithoutCancel(ctx))
		return err
	}
	s.mu.Lock()
	s.locks[name] = conn
	s.mu.Unlock()
	return nil
}

// Unlock lets go of name.
func (s *CertStorage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	conn, ok := s.locks[name]
	delete(s.locks, name)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("tls storage: %q is not locked here", name)
	}
	// Ending the session releases the lock whatever happens to the unlock.
	defer conn.Close(context.WithoutCancel(ctx))
	var released bool
	if err := conn.QueryRow(ctx, `SELECT pg_advisory_unlock($1, hashtext(current_schema() || ':' || $2))`, lockClass, name).Scan(&released); err != nil {
		return err
	}
	if !released {
		return fmt.Errorf("tls storage: %q was not held", name)
	}
	return nil
}
