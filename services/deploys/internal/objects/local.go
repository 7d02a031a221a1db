package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// keyRe keeps keys to plain relative paths, so a key can never name a file outside the root.
var keyRe = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)

// Local stores objects as files under a directory. An object is written to a temporary file
// in the same file system, synced, then renamed into place, so a reader sees a whole object
// or none and a crash mid-upload leaves only a temporary file that the next start removes.
type Local struct {
	root string
	tmp  string
}

// NewLocal opens (creating) the store rooted at dir and removes temporary files a crash left.
func NewLocal(dir string) (*Local, error) {
	l := &Local{root: dir, tmp: filepath.Join(dir, ".tmp")}
	if err := os.RemoveAll(l.tmp); err != nil {
		return nil, fmt.Errorf("objects: clear temporary files: %w", err)
	}
	if err := os.MkdirAll(l.tmp, 0o700); err != nil {
		return nil, fmt.Errorf("objects: create %s: %w", l.tmp, err)
	}
	return l, nil
}

// Root is the directory the store keeps its objects in.
func (l *Local) Root() string { return l.root }

func (l *Local) path(key string) (string, error) {
	if !keyRe.MatchString(key) || strings.Contains("/"+key+"/", "/../") || strings.HasPrefix(key, ".") {
		return "", fmt.Errorf("objects: invalid key %q", key)
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// Create starts an object under key.
func (l *Local) Create(_ context.Context, key string) (Upload, error) {
	dst, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(l.tmp, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("objects: create temporary file: %w", err)
	}
	return &localUpload{f: f, dst: dst}, nil
}

type localUpload struct {
	f    *os.File
	dst  string
	done bool
}

func (u *localUpload) Write(p []byte) (int, error) { return u.f.Write(p) }

func (u *localUpload) Commit() error {
	if u.done {
		return errors.New("objects: upload already finished")
	}
	u.done = true
	err := u.f.Sync()
	if cerr := u.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.MkdirAll(filepath.Dir(u.dst), 0o700)
	}
	if err == nil {
		err = os.Rename(u.f.Name(), u.dst)
	}
	if err != nil {
		os.Remove(u.f.Name())
		return fmt.Errorf("objects: commit: %w", err)
	}
	// The rename is durable only once the directory entry is.
	if d, derr := os.Open(filepath.Dir(u.dst)); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (u *localUpload) Abort() error {
	if u.done {
		return nil
	}
	u.done = true
	u.f.Close()
	if err := os.Remove(u.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("objects: abort: %w", err)
	}
	return nil
}

// Open reads an object.
func (l *Local) Open(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err
}

// Delete removes an object; a missing one is not an error, so deletes can be retried.
func (l *Local) Delete(_ context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("objects: delete: %w", err)
	}
	return nil
}

// Walk lists committed objects under prefix (a key prefix ending at a folder).
func (l *Local) Walk(ctx context.Context, prefix string, fn func(key string, modTime time.Time) error) error {
	start := l.root
	if prefix != "" {
		p, err := l.path(strings.TrimSuffix(prefix, "/"))
		if err != nil {
			return err
		}
		start = p
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p == l.tmp {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		rel, err := filepath.Rel(l.root, p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), info.ModTime())
	})
	return err
}
