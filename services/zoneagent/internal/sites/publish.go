package sites

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"

	"tori.dev/pkg/objectstore"
)

// Store is the zone's sites in the zone's own bucket, reached with the zone's own
// credentials (no other holder may read or list that bucket).
type Store struct {
	Bucket *objectstore.Store
}

// Publish uploads the site unpacked in dir as the revision's objects, then its manifest. It
// is idempotent: a publication interrupted (a restart mid-way) is done again from the start
// and overwrites what the first attempt wrote. dir holds regular files and folders only (the
// zone unpacks static artifacts without links); anything else is refused.
func (s Store) Publish(ctx context.Context, appID, deployID, dir string) error {
	if !validID(appID) || !validID(deployID) {
		return fmt.Errorf("sites: invalid app or deploy id %q/%q", appID, deployID)
	}
	m := Manifest{Version: manifestVersion, Files: map[string]File{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("sites: %s is not a regular file", p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		f, err := s.putFile(ctx, fileKey(appID, deployID, name), p)
		if err != nil {
			return fmt.Errorf("sites: publish %s: %w", name, err)
		}
		m.Files[name] = f
		return nil
	})
	if err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = s.Bucket.Put(ctx, manifestKey(appID, deployID), bytes.NewReader(b), int64(len(b)), "application/json")
	return err
}

// putFile uploads one file with the content type the edge would have served it with from
// disk (net/http's rule: by extension, else sniffed from its first 512 bytes).
func (s Store) putFile(ctx context.Context, key, p string) (File, error) {
	f, err := os.Open(p)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return File{}, err
	}
	ctype := mime.TypeByExtension(path.Ext(key))
	if ctype == "" {
		head := make([]byte, 512)
		n, err := io.ReadFull(f, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return File{}, err
		}
		ctype = http.DetectContentType(head[:n])
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return File{}, err
		}
	}
	up, err := s.Bucket.Put(ctx, key, f, info.Size(), ctype)
	if err != nil {
		return File{}, err
	}
	return File{Size: info.Size(), ContentType: ctype, ETag: up.ETag}, nil
}
