package httpapi

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/services/gateway/internal/idempotency"
	"tori.dev/services/gateway/internal/proxy"
	"tori.dev/services/gateway/internal/routes"
)

// Refusals of a request under an Idempotency-Key.
var (
	errKeyInvalid        = errors.New("httpapi: idempotency key invalid")
	errInProgress        = errors.New("httpapi: a request with this idempotency key is running")
	errKeyReused         = errors.New("httpapi: idempotency key reused with another request")
	errNotKept           = errors.New("httpapi: the first answer under this idempotency key was not kept")
	errCredentialNotKept = errors.New("httpapi: the first answer under this idempotency key held a credential")
	errKeysDown          = errors.New("httpapi: idempotency keys unavailable")
	errBodyTooLarge      = proxy.ErrTooLarge
)

// forwardOnce forwards a POST carrying an Idempotency-Key at most once per key: the first
// request under a key acts and its answer is kept; a retry with the same request gets that
// answer again without reaching the service. The body is hashed as it streams through, never
// held; only the answer (up to idempotency.MaxResponse) is kept.
func (s *Server) forwardOnce(ctx context.Context, c *fiber.Ctx, m routes.Match, base string, caller callerid.Caller, addr, key string) (proxy.Result, error) {
	if !idempotency.ValidKey(key) {
		proxy.Discard(c)
		return proxy.Result{}, errKeyInvalid
	}
	// A key is the account's and the kind of token's: a repeat is answered only to the
	// principal type and account that made the first request, so an API token cannot collect
	// what a session's request was answered (a session-only route refuses it as it would
	// without the key).
	scope := "account:" + caller.AccountID + " " + caller.TokenKind
	if caller.Scope != "" {
		// A scoped token may do less than its person's other tokens: its keys are its own, so
		// it never collects an answer made for a wider token (nor one for a narrower).
		scope += " token:" + caller.TokenID
	}
	if m.Public() {
		if addr == "" {
			addr = s.clientAddr(c)
		}
		scope = "address:" + addr
	}
	claim, ok, rec, err := s.Idempotency.Claim(ctx, idempotency.KeyHash(scope, key), idempotency.Lease)
	if err != nil {
		s.Log.WarnContext(ctx, "idempotency claim failed", "err", err.Error())
		proxy.Discard(c)
		return proxy.Result{}, errKeysDown
	}
	target := requestTarget(c)
	mints := m.Route != nil && m.Route.Mints
	if !ok {
		return proxy.Result{}, s.answerAgain(c, rec, target, mints)
	}

	k := &keeper{store: s.Idempotency, claim: claim, fp: idempotency.NewFingerprint(c.Method(), target), log: s,
		capture: capture{max: idempotency.MaxResponse}, withhold: mints}
	k.renewing(ctx)
	return s.Proxy.Forward(ctx, c, base, caller, k)
}

// answerAgain answers a request whose key another request holds or held.
func (s *Server) answerAgain(c *fiber.Ctx, rec idempotency.Record, target string, mints bool) error {
	v, err := idempotency.Judge(rec, func() ([]byte, error) { return hashBody(c, target) })
	if err != nil {
		return err
	}
	switch v {
	case idempotency.InProgress:
		proxy.Discard(c)
		return errInProgress
	case idempotency.Reused:
		return errKeyReused
	case idempotency.NotKept:
		if mints && rec.Status/100 == 2 {
			return errCredentialNotKept
		}
		return errNotKept
	}
	c.Status(rec.Status)
	if rec.ContentType != "" {
		c.Set(fiber.HeaderContentType, rec.ContentType)
	}
	c.Set(idempotency.ReplayedHeader, "true")
	return c.Send(rec.Body)
}

// hashBody reads the whole request body through its fingerprint: a retry's body is compared
// by hash, never held, whatever its size (up to the gateway's cap).
func hashBody(c *fiber.Ctx, target string) ([]byte, error) {
	fp := idempotency.NewFingerprint(c.Method(), target)
	fc := c.Context()
	stream := fc.RequestBodyStream()
	if stream == nil || !proxy.HasBody(&fc.Request.Header) {
		_, _ = fp.Write(fc.Request.Body())
		return fp.Sum(), nil
	}
	n, err := io.Copy(fp, io.LimitReader(stream, MaxBody+1))
	if err != nil {
		fc.SetConnectionClose()
		return nil, proxy.ErrBadRequest
	}
	if n > MaxBody {
		fc.SetConnectionClose()
		return nil, errBodyTooLarge
	}
	return fp.Sum(), nil
}

// requestTarget is the path and query as the service will see them.
func requestTarget(c *fiber.Ctx) string {
	uri := c.Context().Request.URI()
	t := string(uri.PathOriginal())
	if q := uri.QueryString(); len(q) > 0 {
		t += "?" + string(q)
	}
	return t
}

// warner is the logger a keeper reports to.
type warner interface {
	warn(ctx context.Context, msg string, err error)
}

func (s *Server) warn(ctx context.Context, msg string, err error) {
	s.Log.WarnContext(ctx, msg, "err", err.Error())
}

// keeper watches the first request under a key pass through the proxy: it hashes the body,
// keeps the answer (up to MaxResponse), renews the key's lease while the request runs, and at
// the end keeps the answer or lets the key go.
type keeper struct {
	store idempotency.Store
	claim idempotency.Claim
	fp    *idempotency.Fingerprint
	log   warner

	capture // the answer, up to idempotency.MaxResponse
	// withhold: the route mints credentials, so a 2xx answer is recorded as not kept (its
	// secret never reaches the database) and a repeat answers 409.
	withhold bool

	mu   sync.Mutex // guards fp and done
	done bool
	stop chan struct{}
}

// renewing renews the lease every third of it until the request ends, so a long upload keeps
// its key while a gateway that died lets it go.
func (k *keeper) renewing(ctx context.Context) {
	k.stop = make(chan struct{})
	go func() {
		t := time.NewTimer(idempotency.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-k.stop:
				return
			case <-t.C:
				if err := k.store.Renew(context.WithoutCancel(ctx), k.claim, idempotency.Lease); err != nil {
					k.log.warn(ctx, "idempotency lease renewal failed", err)
				}
				t.Reset(idempotency.Lease / 3)
			}
		}
	}()
}

func (k *keeper) RequestBody(p []byte) {
	k.mu.Lock()
	_, _ = k.fp.Write(p)
	k.mu.Unlock()
}

func (k *keeper) Done(requestComplete, responseComplete bool, err error) {
	k.mu.Lock()
	if k.done {
		k.mu.Unlock()
		return
	}
	k.done = true
	close(k.stop)
	sum := k.fp.Sum()
	k.mu.Unlock()
	a := idempotency.Answer{RequestHash: sum}
	a.Status, a.ContentType, a.Body, a.TooLarge = k.answer()
	if k.withhold && a.Status/100 == 2 {
		a.ContentType, a.Body, a.TooLarge = "", nil, true
	}

	// The answer has been sent; what is left must not depend on the client.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err == nil && idempotency.Keep(a.Status, requestComplete, responseComplete) {
		if a.Body == nil && !a.TooLarge {
			a.Body = []byte{}
		}
		if ferr := k.store.Finish(ctx, k.claim, a); ferr != nil {
			k.log.warn(ctx, "idempotency answer not kept", ferr)
		}
		return
	}
	if rerr := k.store.Release(ctx, k.claim); rerr != nil {
		k.log.warn(ctx, "idempotency key not released", rerr)
	}
}
