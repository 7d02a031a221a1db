package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"tori.dev/pkg/callerid"
)

var (
	// ErrUpstream means the service could not be reached or gave no answer.
	ErrUpstream = errors.New("proxy: upstream unavailable")
	// ErrBadRequest means the request cannot be expressed upstream (an unparseable target).
	ErrBadRequest = errors.New("proxy: bad request")
)

// CountBucketHeader is identity's signal that a request counts against its per-address
// bucket (the token exchange with an unknown code). Never forwarded to the client.
const CountBucketHeader = "X-Tori-Count-Bucket"

// drainLimit is how much of an unwanted request body is read to keep the connection, and
// drainTimeout how long that may take; past either the connection is closed instead.
const (
	drainLimit   = 64 << 10
	drainTimeout = 2 * time.Second
)

// Proxy forwards requests, signing the caller onto each.
type Proxy struct {
	rt      http.RoundTripper
	key     []byte
	maxBody int64
}

// New forwards through rt, signing with key, refusing bodies over maxBody bytes.
func New(rt http.RoundTripper, key []byte, maxBody int64) *Proxy {
	return &Proxy{rt: rt, key: key, maxBody: maxBody}
}

// Result is what the gateway needs to know about a forwarded request's answer.
type Result struct {
	Status      int
	CountBucket bool
}

// Observer sees one forwarded exchange as it passes, without holding either body: the
// request body's bytes as the service reads them, the response's status and headers, the
// response body's bytes as the client is sent them, and the end.
type Observer interface {
	RequestBody(p []byte)
	Response(status int, header http.Header)
	ResponseBody(p []byte)
	// Done is called once: after the response body was written to the client (or failed), or
	// when there was no answer (err set). requestComplete says whether the service read the
	// whole request body; responseComplete whether the whole response body passed.
	Done(requestComplete, responseComplete bool, err error)
}

// Forward sends the request in c to the service at base (scheme://host[:port]) with the same
// method, raw path and query, and streams the answer back into c. ctx carries the trace; it
// must outlive the handler, because the answer's body is copied after the handler returns.
// obs, when not nil, observes the exchange.
func (p *Proxy) Forward(ctx context.Context, c *fiber.Ctx, base string, caller callerid.Caller, obs Observer) (Result, error) {
	return p.forward(ctx, c, base, caller, obs, nil)
}

// ForwardWrapped is Forward with a 200 answer's body passed through wrap on its way to the
// client (a log stream, which the gateway may end itself).
func (p *Proxy) ForwardWrapped(ctx context.Context, c *fiber.Ctx, base string, caller callerid.Caller, wrap func(io.ReadCloser) io.ReadCloser) (Result, error) {
	return p.forward(ctx, c, base, caller, nil, wrap)
}

func (p *Proxy) forward(ctx context.Context, c *fiber.Ctx, base string, caller callerid.Caller, obs Observer, wrap func(io.ReadCloser) io.ReadCloser) (Result, error) {
	fc := c.Context()
	method := c.Method()

	uri := fc.Request.URI()
	target := base + string(uri.PathOriginal())
	if q := uri.QueryString(); len(q) > 0 {
		target += "?" + string(q)
	}

	cl := bodyLength(&fc.Request.Header)
	if cl > p.maxBody {
		Discard(c)
		if obs != nil {
			obs.Done(false, false, ErrTooLarge)
		}
		return Result{}, ErrTooLarge
	}
	var (
		body   io.Reader = http.NoBody
		guard  *guardedBody
		digest = emptyDigest
		sealed *sealedBody
	)
	if cl != 0 {
		stream := fc.RequestBodyStream()
		if stream == nil { // the server buffered it after all (a test harness)
			stream = bytes.NewReader(fc.Request.Body())
		}
		conn := fc.Conn()
		if streamed(method, uri) {
			// A deploy upload: streamed, its digest sealed into a trailer at its end.
			sealed = &sealedBody{r: stream, h: sha256.New(), key: p.key}
			stream, digest = sealed, callerid.DigestTrailer
		} else {
			// Every other body is had whole before sending, chunked ones included, so its
			// digest goes in the signature; one larger than any service takes is 413 here.
			if cl > InlineBody {
				Discard(c)
				if obs != nil {
					obs.Done(false, false, ErrTooLarge)
				}
				return Result{}, ErrTooLarge
			}
			whole, err := readInline(stream, cl)
			if err != nil {
				fc.SetConnectionClose()
				if obs != nil {
					obs.Done(false, false, err)
				}
				if errors.Is(err, ErrTooLarge) {
					return Result{}, ErrTooLarge
				}
				return Result{}, ErrBadRequest
			}
			digest = callerid.DigestOf(whole)
			stream, conn = bytes.NewReader(whole), nil // nothing of it is left on the connection
			if cl < 0 {
				cl = int64(len(whole)) // forwarded with its length, no longer chunked
			}
		}
		guard = &guardedBody{r: stream, max: p.maxBody, conn: conn, obs: obs}
		body = guard
	}

	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		Discard(c)
		if obs != nil {
			obs.Done(false, false, err)
		}
		return Result{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	switch {
	case sealed != nil:
		req.ContentLength = -1 // chunked, to carry the seal in its trailer
		req.Trailer = http.Header{callerid.HeaderBodySeal: nil}
		sealed.trailer = req.Trailer
	case cl > 0:
		req.ContentLength = cl
	case cl != 0:
		req.ContentLength = -1 // chunked: the length is unknown until the end
	}
	copyRequestHeaders(&fc.Request.Header, req.Header)
	appendForwardedFor(req.Header, fc.RemoteIP().String())
	if sealed != nil && cl > 0 {
		req.Header[callerid.HeaderDeclaredLength] = []string{strconv.FormatInt(cl, 10)}
	}
	// Sign exactly what the service will see as its request URI, and the body.
	callerid.SignBody(p.key, setCanonical(req.Header), caller, method, req.URL.Host, req.URL.RequestURI(), time.Now(), digest)
	if sealed != nil {
		sealed.signature = req.Header.Get(callerid.HeaderSignature)
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))

	resp, err := p.rt.RoundTrip(req)
	if err != nil {
		if guard != nil {
			_ = guard.Close()
			fc.SetConnectionClose() // whatever of the body is unread is still on the connection
		}
		if obs != nil {
			obs.Done(false, false, err)
		}
		return Result{}, fmt.Errorf("%w: %v", ErrUpstream, err)
	}
	if guard != nil && guard.conn != nil && !guard.Complete() {
		fc.SetConnectionClose()
	}

	res := Result{Status: resp.StatusCode, CountBucket: resp.Header.Get(CountBucketHeader) == "1"}
	if obs != nil {
		obs.Response(resp.StatusCode, resp.Header)
	}
	c.Status(resp.StatusCode)
	copyResponseHeaders(resp.Header, &fc.Response.Header)

	if method == fiber.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified || resp.ContentLength == 0 {
		if method == fiber.MethodHead && resp.ContentLength >= 0 {
			fc.Response.SkipBody = true
			fc.Response.Header.SetContentLength(int(resp.ContentLength))
		}
		_ = resp.Body.Close()
		complete := guard == nil || guard.Complete()
		if guard != nil {
			guard.drainRest()
			_ = guard.Close()
		}
		if obs != nil {
			obs.Done(complete, true, nil)
		}
		return res, nil
	}
	// fasthttp copies the body after the handler returns, with its pooled buffers, and closes
	// it when done: neither body is ever held whole in memory. -1 is "length unknown" to both.
	answer := resp.Body
	if wrap != nil && resp.StatusCode == http.StatusOK {
		answer = wrap(answer)
	}
	fc.SetBodyStream(&responseBody{ReadCloser: answer, guard: guard, obs: obs, length: resp.ContentLength}, int(resp.ContentLength))
	return res, nil
}

// Discard deals with the body of a request that will not be forwarded: a small body is read
// away (briefly; a client that stalls loses its connection) so the connection can serve the
// next request; a large one closes the connection instead.
func Discard(c *fiber.Ctx) {
	fc := c.Context()
	cl := bodyLength(&fc.Request.Header)
	if cl == 0 {
		return
	}
	stream := fc.RequestBodyStream()
	if stream == nil {
		return // already buffered: nothing is left on the connection
	}
	if cl <= drainLimit { // includes -1, chunked: drained if it ends soon enough
		// fasthttp sets a fresh deadline for the next request, so this one cannot linger.
		_ = fc.Conn().SetReadDeadline(time.Now().Add(drainTimeout))
		n, err := io.Copy(io.Discard, io.LimitReader(stream, drainLimit+1))
		if err == nil && n <= drainLimit && (cl < 0 || n == cl) {
			return
		}
	}
	fc.SetConnectionClose()
}

// setCanonical writes headers whose names are already canonical (callerid's), skipping the
// canonicalisation http.Header.Set repeats on every request.
func setCanonical(h http.Header) callerid.Setter {
	return func(k, v string) { h[k] = []string{v} }
}

// bodyLength is the request body's declared length: -1 when chunked (unknown until the end),
// 0 when there is none. fasthttp says -2 for a request without Content-Length or
// Transfer-Encoding, which for a request means no body (RFC 9112 section 6.3).
func bodyLength(h *fasthttp.RequestHeader) int64 {
	switch cl := h.ContentLength(); {
	case cl > 0, cl == -1:
		return int64(cl)
	}
	return 0
}

// HasBody reports whether a request carries a body.
func HasBody(h *fasthttp.RequestHeader) bool { return bodyLength(h) != 0 }

func appendForwardedFor(h http.Header, peer string) {
	if prior := h.Values("X-Forwarded-For"); len(prior) > 0 {
		h.Set("X-Forwarded-For", strings.Join(prior, ", ")+", "+peer)
		return
	}
	h.Set("X-Forwarded-For", peer)
}
