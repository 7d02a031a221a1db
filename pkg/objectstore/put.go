package objectstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/minio/minio-go/v7"
)

// maxParts is S3's limit on the parts of one multipart upload.
const maxParts = 10000

// abortTimeout bounds the abort of a failed upload, which runs even when the upload's ctx is
// over (a cancelled upload must still leave nothing behind).
const abortTimeout = 30 * time.Second

// errTooLarge: the stream goes on past maxParts parts.
var errTooLarge = errors.New("objectstore: object larger than the store's multipart limit")

// putParts stores r, of length size (< 0: unknown), read one PartSize part at a time into one
// kept buffer (partbuf.go; two with ReadAhead, the next part read into the second while the
// first is sent). A stream that ends within its first part is one plain PUT of that buffer; a
// longer one is a multipart upload of the buffers' successive contents, aborted on any
// failure so that no object and no unfinished upload stays behind.
//
// minio-go's own PutObject does the same with a new heap buffer for every upload and, over
// plain HTTP, signs each part in 64 KiB chunks (aws-chunked: about 11 MB of garbage per
// 64 MiB sent, BenchmarkPutStreaming). Here a part is whole in the buffer before it goes, so
// its SHA-256 is known and signed up front (the server recomputes and checks it), and it is
// sent from a partReader over the buffer (seekable: retried without a copy).
func (s *Store) putParts(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Info, error) {
	if size > maxParts*PartSize {
		return Info{}, errTooLarge
	}
	if size >= 0 {
		r = io.LimitReader(r, size)
	}
	// cur holds the part being sent; spare, with ReadAhead, the next one as it is read.
	cur := partBuffers.get()
	var spare *partBuffer
	defer func() {
		partBuffers.put(cur)
		if spare != nil {
			partBuffers.put(spare)
		}
	}()
	buf := cur.b

	p, err := readPart(r, buf)
	if err != nil {
		return Info{}, fmt.Errorf("objectstore: read %s: %w", key, err)
	}
	core := minio.Core{Client: s.client}
	opts := minio.PutObjectOptions{ContentType: contentType}
	if p.last {
		if size >= 0 && int64(p.n) != size {
			return Info{}, fmt.Errorf("objectstore: %s: the stream ended after %d of %d bytes", key, p.n, size)
		}
		body := newPartReader(buf[:p.n])
		signed := opts
		signed.DisableContentSha256 = true // no chunk signatures: the hash below is signed
		up, err := core.PutObject(ctx, s.bucket, key, body, int64(p.n), "", p.sha256, signed)
		body.detach()
		if err != nil {
			return Info{}, translate(err)
		}
		return Info{Key: key, Size: int64(p.n), ETag: up.ETag, ContentType: contentType, LastModified: up.LastModified}, nil
	}

	id, err := core.NewMultipartUpload(ctx, s.bucket, key, opts)
	if err != nil {
		return Info{}, translate(err)
	}
	var parts []minio.CompletePart
	var total int64
	for p.n > 0 {
		if len(parts) == maxParts {
			return Info{}, s.abort(ctx, key, id, errTooLarge)
		}
		var next chan readResult
		if s.readAhead && !p.last {
			if spare == nil {
				spare = partBuffers.get()
			}
			next = make(chan readResult, 1)
			go func(b []byte) {
				q, err := readPart(r, b)
				next <- readResult{q, err}
			}(spare.b)
		}
		body := newPartReader(cur.b[:p.n])
		done, err := core.PutObjectPart(ctx, s.bucket, key, id, len(parts)+1, body, int64(p.n),
			minio.PutObjectPartOptions{Sha256Hex: p.sha256, DisableContentSha256: true})
		body.detach()
		if err != nil {
			if next != nil {
				// The read may wait on r for as long as its writer likes: its buffer goes
				// back to the pool once it ends, not now.
				go func(b *partBuffer) { <-next; partBuffers.put(b) }(spare)
				spare = nil
			}
			return Info{}, s.abort(ctx, key, id, translate(err))
		}
		parts = append(parts, minio.CompletePart{PartNumber: done.PartNumber, ETag: done.ETag})
		total += int64(p.n)
		if p.last {
			break
		}
		if next != nil {
			got := <-next
			cur, spare = spare, cur
			p, err = got.p, got.err
		} else {
			p, err = readPart(r, cur.b)
		}
		if err != nil {
			return Info{}, s.abort(ctx, key, id, fmt.Errorf("objectstore: read %s: %w", key, err))
		}
	}
	if size >= 0 && total != size {
		return Info{}, s.abort(ctx, key, id, fmt.Errorf("objectstore: %s: the stream ended after %d of %d bytes", key, total, size))
	}
	up, err := core.CompleteMultipartUpload(ctx, s.bucket, key, id, parts, opts)
	if err != nil {
		return Info{}, s.abort(ctx, key, id, translate(err))
	}
	return Info{Key: key, Size: total, ETag: up.ETag, ContentType: contentType, LastModified: up.LastModified}, nil
}

// readResult is a part read ahead (ReadAhead) while the one before it was sent.
type readResult struct {
	p   part
	err error
}

// part is what readPart put in the buffer.
type part struct {
	n      int
	sha256 string // hex, as SigV4 signs a payload
	last   bool   // the stream ended within it (n may then be 0)
}

// readPart fills buf from r, hashing the bytes as they arrive: whoever writes r (deploys'
// upload, through a pipe) goes on producing while the hash is taken, instead of waiting
// through a pass over the whole part before it is sent.
func readPart(r io.Reader, buf []byte) (part, error) {
	h := sha256.New()
	n, err := io.ReadFull(io.TeeReader(r, h), buf)
	switch {
	case err == nil:
	case err == io.EOF, err == io.ErrUnexpectedEOF: // ReadFull returns them unwrapped
	default:
		return part{}, err
	}
	return part{n: n, sha256: hex.EncodeToString(h.Sum(nil)), last: err != nil}, nil
}

// abort gives up the multipart upload id and returns cause. The abort gets a context of its
// own: the upload's may be what failed it.
func (s *Store) abort(ctx context.Context, key, id string, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	if err := (minio.Core{Client: s.client}).AbortMultipartUpload(ctx, s.bucket, key, id); err != nil {
		return errors.Join(cause, fmt.Errorf("objectstore: abort the upload of %s: %w", key, translate(err)))
	}
	return cause
}
