package objects

import "errors"

// ErrTooLarge is returned by a LimitedReader once more than its limit was read.
var ErrTooLarge = errors.New("objects: over the size limit")

// LimitedReader counts bytes read from R and fails with ErrTooLarge as soon as the count
// passes Limit, so an upload is refused while streaming rather than after it is stored.
type LimitedReader struct {
	R     interface{ Read([]byte) (int, error) }
	Limit int64
	N     int64
}

func (l *LimitedReader) Read(p []byte) (int, error) {
	if l.N > l.Limit {
		return 0, ErrTooLarge
	}
	// Read at most one byte past the limit: enough to tell "exactly at" from "over".
	if room := l.Limit - l.N + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.R.Read(p)
	l.N += int64(n)
	if l.N > l.Limit {
		return n, ErrTooLarge
	}
	return n, err
}
