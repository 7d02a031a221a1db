package keyring

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// keyFile is the on-disk form of the local keyring. It holds every key version ever made;
// versions are never dropped, because ciphertexts outside this service (deploy snapshots)
// may still name them.
type keyFile struct {
	Format  string       `json:"format"`
	Primary int          `json:"primary"`
	Keys    []keyVersion `json:"keys"`
}

type keyVersion struct {
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	Key       []byte    `json:"key"` // 32 bytes, base64 in JSON
}

const fileFormat = "tori-keyring-v1"

func newKeyVersion(v int) (keyVersion, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return keyVersion{}, err
	}
	return keyVersion{Version: v, CreatedAt: time.Now().UTC().Truncate(time.Second), Key: k}, nil
}

func (f *keyFile) validate() error {
	if f.Format != fileFormat {
		return fmt.Errorf("unknown format %q", f.Format)
	}
	seen := map[int]bool{}
	for _, k := range f.Keys {
		if len(k.Key) != 32 || k.Version < 1 || seen[k.Version] {
			return fmt.Errorf("key version %d is malformed or repeated", k.Version)
		}
		seen[k.Version] = true
	}
	if !seen[f.Primary] {
		return fmt.Errorf("primary version %d is not in the file", f.Primary)
	}
	return nil
}

func (f *keyFile) key(version int) ([]byte, bool) {
	for _, k := range f.Keys {
		if k.Version == version {
			return k.Key, true
		}
	}
	return nil, false
}

func (f *keyFile) rotate() error {
	next := 0
	for _, k := range f.Keys {
		next = max(next, k.Version)
	}
	kv, err := newKeyVersion(next + 1)
	if err != nil {
		return err
	}
	f.Keys = append(f.Keys, kv)
	f.Primary = kv.Version
	return nil
}

// readKeyFile loads and checks path. The file must not be readable by anyone but its owner:
// it is every environment value's key.
func readKeyFile(path string) (*keyFile, fs.FileInfo, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, nil, fmt.Errorf("keyring: %s is readable by group or others (mode %v); chmod 600 it", path, info.Mode().Perm())
	}
	var f keyFile
	if err := json.NewDecoder(fh).Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("keyring: %s: %w", path, err)
	}
	if err := f.validate(); err != nil {
		return nil, nil, fmt.Errorf("keyring: %s: %w", path, err)
	}
	return &f, info, nil
}

// writeKeyFile replaces path atomically (write, fsync, rename, fsync the folder), so a crash
// never leaves half a keyring.
func writeKeyFile(path string, f *keyFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".keyring-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
