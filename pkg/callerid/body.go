package callerid

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"strings"
)

// A signature binds the request's body through HeaderBodyDigest, which the MAC covers:
//
//   - "sha256=<hex>": the body's SHA-256, for a body the gateway has whole before sending
//     (every body but a deploy upload; an empty one too);
//   - DigestTrailer: a streamed body (a deploy upload), sent chunked with the trailer
//     HeaderBodySeal = HMAC(key, signature, SHA-256 of the body), known only at its end;
//   - "": unbound, only from holders of the key (tools, tests); the gateway never signs so.
//
// A service checks the body against it (Middleware for a body it reads whole, Body for one it
// streams) and refuses a mismatch; a streaming service discards what it stored before the
// check (docs/conventions.md, "Gateway to service").
const DigestTrailer = "trailer"

// ErrBodyMismatch means the body is not the one the signature was made for.
var ErrBodyMismatch = errors.New("callerid: body does not match its signature")

// DigestOf is the digest header value of a body known whole.
func DigestOf(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256=" + hex.EncodeToString(sum[:])
}

// Seal is the trailer value of a streamed body whose SHA-256 is sum, for the request whose
// signature header is signature.
func Seal(key []byte, signature string, sum []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("seal\n" + signature + "\n" + hex.EncodeToString(sum)))
	return hex.EncodeToString(h.Sum(nil))
}

// CheckBody checks a whole body against the signed digest; get reads the request's headers
// (trailers included, once the body has been read).
func CheckBody(key []byte, get Getter, body []byte) error {
	sum := sha256.Sum256(body)
	return checkSum(key, get, sum[:])
}

func checkSum(key []byte, get Getter, sum []byte) error {
	digest := get(HeaderBodyDigest)
	var ok bool
	switch {
	case digest == "":
		ok = true
	case digest == DigestTrailer:
		ok = hmac.Equal([]byte(get(HeaderBodySeal)), []byte(Seal(key, get(HeaderSignature), sum)))
	case strings.HasPrefix(digest, "sha256="):
		ok = hmac.Equal([]byte(digest[len("sha256="):]), []byte(hex.EncodeToString(sum)))
	}
	if !ok {
		return ErrBodyMismatch
	}
	return nil
}

// CheckedReader hashes a streamed body as it is read and, at its end, checks it against the
// signed digest: instead of io.EOF its last read returns ErrBodyMismatch when they differ, so
// a reader that stores the body as it comes must discard it unless it saw io.EOF. get is
// called only at the end, when a trailer has arrived.
func CheckedReader(key []byte, get Getter, r io.Reader) *Checked {
	return &Checked{r: r, h: sha256.New(), key: key, get: get}
}

// Checked is a body checked at its end (CheckedReader).
type Checked struct {
	r   io.Reader
	h   hash.Hash
	key []byte
	get Getter
	err error
}

func (c *Checked) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if err == io.EOF {
		if cerr := checkSum(c.key, c.get, c.h.Sum(nil)); cerr != nil {
			c.err = cerr
			return n, cerr
		}
		c.err = io.EOF
	}
	return n, err
}

// Mismatched reports whether the body was read to its end and is not the one signed, however
// a reader above it reported the failure.
func (c *Checked) Mismatched() bool { return errors.Is(c.err, ErrBodyMismatch) }
