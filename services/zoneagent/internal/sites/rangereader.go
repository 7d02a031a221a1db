package sites

import (
	"context"
	"errors"
	"io"

	"tori.dev/pkg/objectstore"
)

// rangeReader reads one file of a bundle by ranged GETs from where the reader was last
// sought to, so http.ServeContent can answer Range requests for a file too large to cache
// without the edge reading (or holding) the rest of it.
type rangeReader struct {
	ctx    context.Context
	bucket *objectstore.Store
	key    string // the bundle
	base   int64  // where the file starts in the bundle
	size   int64
	off    int64
	body   io.ReadCloser
	bodyAt int64 // the offset body reads next
}

func newRangeReader(ctx context.Context, bucket *objectstore.Store, key string, base, size int64) *rangeReader {
	return &rangeReader{ctx: ctx, bucket: bucket, key: key, base: base, size: size}
}

func (r *rangeReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("sites: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("sites: negative offset")
	}
	r.off = offset
	return offset, nil
}

func (r *rangeReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if r.body == nil || r.bodyAt != r.off {
		if r.body != nil {
			r.body.Close()
		}
		body, _, err := r.bucket.Get(r.ctx, r.key, &objectstore.Range{Start: r.base + r.off, End: r.base + r.size - 1})
		if err != nil {
			r.body = nil
			return 0, err
		}
		r.body, r.bodyAt = body, r.off
	}
	n, err := r.body.Read(p)
	r.off += int64(n)
	r.bodyAt += int64(n)
	if errors.Is(err, io.EOF) && r.off < r.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (r *rangeReader) Close() error {
	if r.body != nil {
		return r.body.Close()
	}
	return nil
}
