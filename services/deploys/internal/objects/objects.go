// Package objects is object storage for uploads and artifacts. The deploys service writes
// through Store into the S3-compatible object store (S3); the local-directory implementation
// serves only in-process tests that do not test storage.
package objects

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrNotFound means no object has the key.
var ErrNotFound = errors.New("objects: not found")

// Store keeps immutable objects by key.
type Store interface {
	// Create starts an object. Nothing is visible under key until Commit succeeds; Abort (or
	// a failed Commit) leaves nothing behind.
	Create(ctx context.Context, key string) (Upload, error)
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
	// Walk calls fn for every committed object under prefix.
	Walk(ctx context.Context, prefix string, fn func(key string, modTime time.Time) error) error
}

// Upload is an object being written.
type Upload interface {
	io.Writer
	// Commit makes the object durable and visible under its key.
	Commit() error
	// Abort discards what was written. It is safe after Commit (then it does nothing).
	Abort() error
}
