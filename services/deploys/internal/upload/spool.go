package upload

import (
	"bytes"
	"io"
	"os"
)

// spoolMemory is how much of one file is kept in memory before the spool moves to disk.
const spoolMemory = 1 << 20

// spool buffers one file of unknown size: in memory while small, in a temporary file after.
type spool struct {
	buf  bytes.Buffer
	file *os.File
}

func newSpool() *spool { return &spool{} }

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
		return &s.buf, nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return s.file, nil
}

func (s *spool) Close() {
	if s.file != nil {
		s.file.Close()
	}
}
