package sites

import (
	"bytes"
	"context"
	"crypto/sha256"
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

// Files hands add each file of a site, one after the other: its slash-separated name in the
// site, its size and its bytes (size of them). It returns add's error, or its own (a refused
// archive, an unreadable folder); a name handed twice is the later file.
type Files func(add func(name string, size int64, body io.Reader) error) error

// errUploadEnded: the bundle's upload stopped reading (it failed); the writer's error that
// follows is only an echo of the upload's.
var errUploadEnded = errors.New("sites: upload ended")

// PublishFiles uploads the site files hands on as the revision's bundle (every file's bytes,
// one after the other, in one streaming upload), then its manifest (where each file is in
// the bundle, its size, content type and ETag). One object per revision rather than one per
// file: a site is often a thousand small files, and a round trip each to the store would
// make a deploy take seconds where it took a fraction of one; the edge reads a file back by
// a ranged GET of its bytes. The bytes pass once, from files to the store: each is hashed and
// typed on the way, and nothing is written to disk. When files fails, the upload is given up
// (no bundle, no unfinished upload, no manifest) and its error returned as it is.
// Idempotent: a publication interrupted (a restart mid-way) is done again from the start and
// overwrites what the first attempt wrote.
func (s Store) PublishFiles(ctx context.Context, appID, deployID string, files Files) error {
	if !validID(appID) || !validID(deployID) {
		return fmt.Errorf("sites: invalid app or deploy id %q/%q", appID, deployID)
	}
	m := Manifest{Version: manifestVersion, Files: map[string]File{}}
	// The bundle is written through a pipe as files hands it on, so a site of any size holds
	// one upload part in memory; the manifest is filled in as each file passes.
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		var offset int64
		buf := make([]byte, 64<<10)
		err := files(func(name string, size int64, body io.Reader) error {
			meta, err := copyFile(pw, buf, name, size, body, offset)
			if err != nil {
				return fmt.Errorf("sites: publish %s: %w", name, err)
			}
			m.Files[name] = meta
			offset += size
			return nil
		})
		if err != nil {
			pw.CloseWithError(err) // the upload reads the error and gives up
		} else {
			pw.Close()
		}
		written <- err
	}()
	_, err := s.Bucket.Put(ctx, bundleKey(appID, deployID), pr, -1, "application/octet-stream")
	pr.CloseWithError(errUploadEnded) // unblocks the writer if the upload failed
	// The manifest is complete once the writer is done, not once the store has the bytes.
	werr := <-written
	switch {
	case werr != nil && !errors.Is(werr, errUploadEnded):
		return werr // the site's own failure, which also failed the upload
	case err != nil:
		return err
	case werr != nil:
		return werr
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = s.Bucket.Put(ctx, manifestKey(appID, deployID), bytes.NewReader(b), int64(len(b)), "application/json")
	return err
}

// Publish publishes the site in the folder dir (PublishFiles). dir holds regular files and
// folders only; anything else (a link above all) is refused.
func (s Store) Publish(ctx context.Context, appID, deployID, dir string) error {
	return s.PublishFiles(ctx, appID, deployID, func(add func(string, int64, io.Reader) error) error {
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("sites: %s is not a regular file", p)
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				return err
			}
			return add(filepath.ToSlash(rel), info.Size(), f)
		})
	})
}

// copyFile writes one file of size bytes from body into the bundle and describes it: its
// place, its ETag and the content type the edge would have served it with from disk
// (net/http's rule: by extension, else sniffed from its first 512 bytes). buf is the copy's
// buffer, reused from file to file.
func copyFile(w io.Writer, buf []byte, name string, size int64, body io.Reader, offset int64) (File, error) {
	sum := sha256.New()
	out := io.MultiWriter(w, sum)
	var n int64
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		head := buf[:min(int64(512), size)]
		k, err := io.ReadFull(body, head)
		if err != nil {
			return File{}, fmt.Errorf("%w (%d bytes, not %d)", err, k, size)
		}
		ctype = http.DetectContentType(head)
		if _, err := out.Write(head); err != nil {
			return File{}, err
		}
		n = int64(k)
	}
	rest, err := io.CopyBuffer(out, io.LimitReader(body, size-n), buf)
	if err != nil {
		return File{}, err
	}
	if n += rest; n != size {
		return File{}, fmt.Errorf("changed while being published (%d bytes, not %d)", n, size)
	}
	return File{Offset: offset, Size: size, ContentType: ctype, ETag: etag(sum.Sum(nil))}, nil
}

// etag makes a file's ETag from the SHA-256 of its bytes: its first 16 bytes in hex, quoted,
// as long as an MD5 ETag and cheaper to take here (the CPU hashes SHA-256 in hardware). It
// names the bytes, so it changes exactly when they do; nothing compares it with the store's
// own ETags.
func etag(sha256sum []byte) string {
	return `"` + hex.EncodeToString(sha256sum[:16]) + `"`
}
