package upload

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// spoolMemory is how much of one file is kept in memory before the spool moves to disk.
const spoolMemory = 1 << 20

// spoolBuffers and copyBuffers keep the memory of one file's spool for the next file. A
// static site of a thousand small files otherwise allocates each file about three times over
// (a growing buffer, a copy buffer), and that churn, not any file, set the service's peak
// memory during an upload: the collector falls behind it while the upload keeps both cores
// busy (docs/performance.md: `make bench-deploys`).
var (
	spoolBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	copyBuffers  = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
)

// spool buffers one file of unknown size: in memory while small, in a temporary file after.
type spool struct {
	buf  *bytes.Buffer
	file *os.File
}

func newSpool() *spool { return &spool{buf: spoolBuffers.Get().(*bytes.Buffer)} }

// copyFrom fills the spool from r through a pooled copy buffer.
func (s *spool) copyFrom(r io.Reader) (int64, error) {
	b := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(b)
	return io.CopyBuffer(s, r, *b)
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && s.buf.Len()+len(p) > spoolMemory {
		f, err := os.CreateTemp("", "tori-spool-*")
		if err != nil {
			return 0, err
		}
		os.Remove(f.Name()) // unlinked: the file goes away with the descriptor, even on a crash
		if _, err := f.Write(s.buf.Bytes()); err != nil {
			f.Close()
			return 0, err
		}
		s.buf.Reset()
		s.file = f
	}
	if s.file != nil {
		return s.file.Write(p)
	}
	return s.buf.Write(p)
}

// Reader reads back what was written.
func (s *spool) Reader() (io.Reader, error) {
	if s.file == nil {
		return s.buf, nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return s.file, nil
}

// Close ends the spool; what Reader returned must not be read after it.
func (s *spool) Close() {
	if s.file != nil {
		s.file.Close()
	}
	if s.buf != nil {
		s.buf.Reset()
		spoolBuffers.Put(s.buf) // near spoolMemory at most: a larger file went to disk
		s.buf = nil
	}
}
