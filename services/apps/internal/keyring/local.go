package keyring

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Local is an AES-256-GCM keyring kept in one JSON file (DATA_DIR/keyring.json by default),
// for machines without Vault. Ciphertext is nonce || sealed. Key ids are
// "local:<version>:<fingerprint>": the fingerprint comes from the key itself, so a keyring
// rebuilt from scratch never claims to have the lost keys merely because it reuses their
// version numbers.
//
// The file is re-read whenever it changes on disk, so a running service picks up a rotation
// that `apps rotate-keys` made in another process.
type Local struct {
	path string

	mu    sync.Mutex
	file  *keyFile
	stamp fileStamp
}

type fileStamp struct {
	size  int64
	mtime int64
	ino   uint64
}

func stampOf(info fs.FileInfo) fileStamp {
	s := fileStamp{size: info.Size(), mtime: info.ModTime().UnixNano()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
	}
	return s
}

const localPrefix = "local:"

// OpenLocal opens the keyring file at path. When the file does not exist and create is
// true, a new keyring with one key is written (mode 0600).
func OpenLocal(path string, create bool) (*Local, error) {
	l := &Local{path: path}
	err := l.load()
	if errors.Is(err, fs.ErrNotExist) && create {
		err = l.withLock(func() error {
			if err := l.load(); !errors.Is(err, fs.ErrNotExist) {
				return err // another process made it meanwhile
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return err
			}
			kv, err := newKeyVersion(1)
			if err != nil {
				return err
			}
			if err := writeKeyFile(path, &keyFile{Format: fileFormat, Primary: 1, Keys: []keyVersion{kv}}); err != nil {
				return err
			}
			return l.load()
		})
	}
	if err != nil {
		return nil, fmt.Errorf("keyring: open %s: %w", path, err)
	}
	return l, nil
}

func (l *Local) String() string { return "the local keyring " + l.path }

func (l *Local) load() error {
	f, info, err := readKeyFile(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.file, l.stamp = f, stampOf(info)
	l.mu.Unlock()
	return nil
}

// current returns the key file, re-reading it when it changed on disk.
func (l *Local) current() (*keyFile, error) {
	info, err := os.Stat(l.path)
	if err != nil {
		return nil, fmt.Errorf("keyring: %s: %w", l.path, err)
	}
	l.mu.Lock()
	same := stampOf(info) == l.stamp
	f := l.file
	l.mu.Unlock()
	if same {
		return f, nil
	}
	if err := l.load(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.file, nil
}

// withLock serialises writers of the file across processes.
func (l *Local) withLock(fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return err
	}
	lf, err := os.OpenFile(l.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	return fn()
}

func localKeyID(f *keyFile, version int) string {
	key, _ := f.key(version)
	return localPrefix + strconv.Itoa(version) + ":" + fingerprint(key)
}

// fingerprint names a key without revealing it.
func fingerprint(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("tori keyring key id"))
	return hex.EncodeToString(m.Sum(nil)[:6])
}

// lookup finds the key a key id names, checking its fingerprint.
func (f *keyFile) lookup(id string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(id, localPrefix)
	if !ok {
		return nil, false
	}
	ver, fp, ok := strings.Cut(rest, ":")
	if !ok {
		return nil, false
	}
	v, err := strconv.Atoi(ver)
	if err != nil {
		return nil, false
	}
	key, ok := f.key(v)
	if !ok || fingerprint(key) != fp {
		return nil, false
	}
	return key, true
}

func gcm(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Encrypt implements Keyring.
func (l *Local) Encrypt(_ context.Context, plaintext, aad []byte) ([]byte, string, error) {
	f, err := l.current()
	if err != nil {
		return nil, "", err
	}
	key, _ := f.key(f.Primary)
	aead, err := gcm(key)
	if err != nil {
		return nil, "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, "", err
	}
	return aead.Seal(nonce, nonce, plaintext, aad), localKeyID(f, f.Primary), nil
}

// Decrypt implements Keyring.
func (l *Local) Decrypt(_ context.Context, ciphertext []byte, keyID string, aad []byte) ([]byte, error) {
	f, err := l.current()
	if err != nil {
		return nil, err
	}
	key, ok := f.lookup(keyID)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, keyID)
	}
	aead, err := gcm(key)
	if err != nil {
		return nil, err
	}
	if len(ciphertext) < aead.NonceSize() {
		return nil, ErrDecrypt
	}
	nonce, sealed := ciphertext[:aead.NonceSize()], ciphertext[aead.NonceSize():]
	out, err := aead.Open(nil, nonce, sealed, aad)
	if err != nil {
		return nil, ErrDecrypt
	}
	return out, nil
}

// Rewrap implements Keyring. Locally there is no way around holding the plaintext briefly.
func (l *Local) Rewrap(ctx context.Context, ciphertext []byte, keyID string, aad []byte) ([]byte, string, error) {
	pt, err := l.Decrypt(ctx, ciphertext, keyID, aad)
	if err != nil {
		return nil, "", err
	}
	defer clear(pt)
	return l.Encrypt(ctx, pt, aad)
}

// Rotate implements Keyring: a new key version becomes primary; old ones stay.
func (l *Local) Rotate(context.Context) error {
	return l.withLock(func() error {
		f, _, err := readKeyFile(l.path)
		if err != nil {
			return err
		}
		if err := f.rotate(); err != nil {
			return err
		}
		if err := writeKeyFile(l.path, f); err != nil {
			return err
		}
		return l.load()
	})
}

// Primary implements Keyring.
func (l *Local) Primary(context.Context) (string, error) {
	f, err := l.current()
	if err != nil {
		return "", err
	}
	return localKeyID(f, f.Primary), nil
}

// Has implements Keyring.
func (l *Local) Has(_ context.Context, keyID string) (bool, error) {
	f, err := l.current()
	if err != nil {
		return false, err
	}
	_, ok := f.lookup(keyID)
	return ok, nil
}
