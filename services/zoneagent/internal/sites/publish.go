package sites

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
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

// entry of a publication: one file of the folder being published.
type pending struct {
	name, path string
	size       int64
}

// Publish uploads the site unpacked in dir as the revision's bundle (every file's bytes, one
// after the other, in one streaming upload), then its manifest (where each file is in the
// bundle, its size, content type and ETag). One object per revision rather than one per file:
// a site is often a thousand small files, and a round trip each to the store would make a
// deploy take seconds where it took a fraction of one; the edge reads a file back by a ranged
// GET of its bytes. Idempotent: a publication interrupted (a restart mid-way) is done again
// from the start and overwrites what the first attempt wrote. dir holds regular files and
// folders only (the zone unpacks static artifacts without links); anything else is refused.
func (s Store) Publish(ctx context.Context, appID, deployID, dir string) error {
	if !validID(appID) || !validID(deployID) {
		return fmt.Errorf("sites: invalid app or deploy id %q/%q", appID, deployID)
	}
	var files []pending
	var total int64
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
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, pending{name: filepath.ToSlash(rel), path: p, size: info.Size()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return err
	}
	m := Manifest{Version: manifestVersion, Files: make(map[string]File, len(files))}
	// The bundle is written through a pipe as it is read, so a site of any size holds one
	// upload part in memory; the manifest is filled in as each file passes.
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		var offset int64
		for _, f := range files {
			meta, err := copyFile(pw, f, offset)
			if err != nil {
				err = fmt.Errorf("sites: publish %s: %w", f.name, err)
				pw.CloseWithError(err)
				written <- err
				return
			}
			m.Files[f.name] = meta
			offset += f.size
		}
		pw.Close()
		written <- nil
	}()
	_, err = s.Bucket.Put(ctx, bundleKey(appID, deployID), pr, total, "application/octet-stream")
	pr.CloseWithError(errors.New("sites: upload ended")) // unblocks the writer if the upload failed
	// The manifest is complete once the writer is done, not once the store has the bytes.
	if werr := <-written; werr != nil {
		return werr
	}
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

// copyFile writes one file into the bundle and describes it: its place, its ETag (the MD5 of
// its bytes, as S3 gives an object put whole) and the content type the edge would have served
// it with from disk (net/http's rule: by extension, else sniffed from its first 512 bytes).
func copyFile(w io.Writer, f pending, offset int64) (File, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return File{}, err
	}
	defer fh.Close()
	ctype := mime.TypeByExtension(path.Ext(f.name))
	if ctype == "" {
		head := make([]byte, 512)
		n, err := io.ReadFull(fh, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return File{}, err
		}
		ctype = http.DetectContentType(head[:n])
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			return File{}, err
		}
	}
	sum := md5.New()
	n, err := io.Copy(io.MultiWriter(w, sum), io.LimitReader(fh, f.size))
	if err != nil {
		return File{}, err
	}
	if n != f.size {
		return File{}, fmt.Errorf("changed while being published (%d bytes, not %d)", n, f.size)
	}
	return File{Offset: offset, Size: f.size, ContentType: ctype, ETag: `"` + hex.EncodeToString(sum.Sum(nil)) + `"`}, nil
}
