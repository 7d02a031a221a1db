package proxy

import (
	"errors"
	"hash"
	"io"
	"net/http"

	"github.com/valyala/fasthttp"

	"tori.dev/pkg/callerid"
	"tori.dev/services/gateway/internal/routes"
)

// InlineBody is the largest body the gateway reads whole before forwarding, so that its digest
// is in the signature (pkg/callerid): every JSON body of the API (the largest a service
// takes is billing's 512 KiB, for the payment provider's webhook). Only a deploy upload is
// larger, and it is streamed with its digest sealed into a trailer.
const InlineBody = 512 << 10

// emptyDigest is the digest of no body.
var emptyDigest = callerid.DigestOf(nil)

// streamed reports whether a request is a deploy's or a preview's upload, whose body is
// streamed to the deploys service rather than read whole.
func streamed(method string, uri *fasthttp.URI) bool {
	if method != http.MethodPost {
		return false
	}
	m := routes.Find(method, string(uri.PathOriginal()))
	return m.Route != nil && m.Route.Upload
}

// readInline reads a body of declared length n, or a chunked one (n < 0) to its end, and
// refuses with ErrTooLarge one that passes InlineBody.
func readInline(r io.Reader, n int64) ([]byte, error) {
	if n >= 0 {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, InlineBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > InlineBody {
		return nil, ErrTooLarge
	}
	return b, nil
}

// sealedBody hashes a streamed body as the service reads it and, at its end, writes the seal
// into the request's trailer before reporting io.EOF (net/http sends the trailer after it).
type sealedBody struct {
	r         io.Reader
	h         hash.Hash
	key       []byte
	signature string
	trailer   http.Header
}

func (s *sealedBody) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	if errors.Is(err, io.EOF) {
		s.trailer.Set(callerid.HeaderBodySeal, callerid.Seal(s.key, s.signature, s.h.Sum(nil)))
	}
	return n, err
}
