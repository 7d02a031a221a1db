package objectstore

import (
	"bytes"
	"errors"
	"sync"
)

var errPartReleased = errors.New("objectstore: part buffer already released")

// partReader is one part's bytes in a pooled buffer as minio-go sends them: seekable, so a
// failed attempt is retried from the part's start without a copy, and detachable. net/http
// may still be reading a request body after the call that sent it returned (a server that
// answered before the body was sent); detach, before the buffer is refilled or pooled, makes
// such a late read fail instead of reading the next part's bytes, or unmapped memory.
type partReader struct {
	mu       sync.Mutex
	r        bytes.Reader
	detached bool
}

func newPartReader(b []byte) *partReader {
	p := &partReader{}
	p.r.Reset(b)
	return p
}

func (p *partReader) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.detached {
		return 0, errPartReleased
	}
	return p.r.Read(b)
}

func (p *partReader) Seek(offset int64, whence int) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.detached {
		return 0, errPartReleased
	}
	return p.r.Seek(offset, whence)
}

// detach ends every read of the buffer through p, waiting for one under way.
func (p *partReader) detach() {
	p.mu.Lock()
	p.detached = true
	p.r.Reset(nil)
	p.mu.Unlock()
}
