package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"tori.dev/pkg/objectstore"
)

// S3 stores objects in one bucket of an S3-compatible store (docs/objectstore.md): an upload
// streams into a multipart upload as it is written, one part in memory at a time, and
// becomes visible only when Commit completes it. It is deploys' only artifact store: a zone
// reads an artifact through a URL PresignGet makes, never through a shared folder.
type S3 struct {
	store *objectstore.Store
}

// NewS3 keeps objects in store's bucket.
func NewS3(store *objectstore.Store) *S3 { return &S3{store: store} }

// errAborted is what a multipart upload reads when its writer gives up: the store then
// aborts the upload and nothing appears under the key.
var errAborted = errors.New("objects: upload aborted")

// Create starts a streaming upload under key. Its ctx bounds the whole upload.
func (s *S3) Create(ctx context.Context, key string) (Upload, error) {
	if !validKey(key) {
		return nil, fmt.Errorf("objects: invalid key %q", key)
	}
	pr, pw := io.Pipe()
	u := &s3Upload{w: pw, done: make(chan error, 1)}
	go func() {
		_, err := s.store.Put(ctx, key, pr, -1, "application/octet-stream")
		// A Put that ends early (refused, ctx over) fails the writer's next Write with its
		// reason instead of leaving it blocked on the pipe.
		if err != nil {
			pr.CloseWithError(err)
		} else {
			pr.Close()
		}
		u.done <- err
	}()
	return u, nil
}

type s3Upload struct {
	w        *io.PipeWriter
	done     chan error
	finished bool
}

func (u *s3Upload) Write(p []byte) (int, error) { return u.w.Write(p) }

// Commit ends the stream and waits for the store to complete the multipart upload.
func (u *s3Upload) Commit() error {
	if u.finished {
		return errors.New("objects: upload already finished")
	}
	u.finished = true
	u.w.Close()
	if err := <-u.done; err != nil {
		return fmt.Errorf("objects: commit: %w", err)
	}
	return nil
}

// Abort fails the stream, so the store aborts the multipart upload, and waits for it.
func (u *s3Upload) Abort() error {
	if u.finished {
		return nil
	}
	u.finished = true
	u.w.CloseWithError(errAborted)
	<-u.done // the Put's own error is the abort we asked for
	return nil
}

// Open reads an object.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if !validKey(key) {
		return nil, fmt.Errorf("objects: invalid key %q", key)
	}
	r, _, err := s.store.Get(ctx, key, nil)
	if errors.Is(err, objectstore.ErrNotFound) {
		return nil, ErrNotFound
	}
	return r, err
}

// Delete removes an object; a missing one is not an error, so deletes can be retried.
func (s *S3) Delete(ctx context.Context, key string) error {
	if !validKey(key) {
		return fmt.Errorf("objects: invalid key %q", key)
	}
	return s.store.Delete(ctx, key)
}

// Walk lists committed objects under prefix, a folder as with Local ("artifacts" is
// "artifacts/…", never "artifactsX").
func (s *S3) Walk(ctx context.Context, prefix string, fn func(key string, modTime time.Time) error) error {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	var fnErr error
	err := s.store.List(ctx, prefix, func(i objectstore.Info) bool {
		fnErr = fn(i.Key, i.LastModified)
		return fnErr == nil
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

// PresignGet is a URL that reads one object for ttl without credentials: how a zone is to
// fetch an artifact it was told to deploy.
func (s *S3) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if !validKey(key) {
		return "", fmt.Errorf("objects: invalid key %q", key)
	}
	return s.store.PresignGet(ctx, key, ttl)
}

// validKey is Local's rule for keys, so both stores accept the same ones.
func validKey(key string) bool {
	return keyRe.MatchString(key) && !strings.Contains("/"+key+"/", "/../") && !strings.HasPrefix(key, ".")
}
