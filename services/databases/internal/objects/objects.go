// Package objects is the databases service's view of object storage: the dumps the zones
// write under the objects root (DATA_DIR/objects), which this service streams to customers
// and removes when they are pruned or their database goes.
package objects

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

var (
	dumpKey = regexp.MustCompile(`^dumps/[0-9a-f-]{36}/[0-9a-f-]{36}\.dump$`)
	uuidRe  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// Store is object storage on a file system.
type Store struct{ Root string }

func (s Store) path(key string) (string, error) {
	if !dumpKey.MatchString(key) {
		return "", fmt.Errorf("objects: %q is not a dump key", key)
	}
	return filepath.Join(s.Root, filepath.FromSlash(key)), nil
}

// Open returns the object at key and its size.
func (s Store) Open(key string) (io.ReadCloser, int64, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// Remove deletes the object at key; one already gone is not an error.
func (s Store) Remove(key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveDatabase deletes every dump of a database.
func (s Store) RemoveDatabase(databaseID string) error {
	if !uuidRe.MatchString(databaseID) {
		return fmt.Errorf("objects: %q is not a database id", databaseID)
	}
	return os.RemoveAll(filepath.Join(s.Root, "dumps", databaseID))
}
