package edgeproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"tori.dev/services/zoneagent/internal/edgelink"
)

// errNoInstance: no instance could be chosen for a request (the wake asked for one failed);
// the visitor gets a 503 as for a failed wake.
var errNoInstance = errors.New("no instance of the app to send the request to")

// RoundTrip sends one request to the app's instance with the fewest outstanding requests.
// An instance that fails before answering anything is taken out for outFor, or dropped when
// the runtime says it is gone (and the app woken again); the request then goes once to
// another instance when that cannot run it twice: nothing of it was sent (the connection
// was never made), or it has no body and an idempotent method. Otherwise the failure is
// the visitor's 502, as before.
func (a *appProxy) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	out, body := holdBody(req)
	var failed *instance
	var firstErr error
	for {
		in, err := a.choose(ctx, failed)
		if err != nil {
			if firstErr != nil && !errors.Is(err, edgelink.ErrNoWeb) {
				return nil, firstErr // no other instance: the failure is the visitor's
			}
			return nil, err
		}
		resp, err := in.roundTrip(out)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err // the visitor left: no fault of the instance
		}
		a.failed(ctx, in, err)
		if firstErr != nil || !retryable(req, body, err) {
			return nil, err
		}
		failed, firstErr = in, err
	}
}

// choose is the instance for a request (not skip, the one that just failed it). When every
// instance is out, the runtime is asked again (at most once a wakeEvery); when still none is
// in, the one nearest its return is tried.
func (a *appProxy) choose(ctx context.Context, skip *instance) (*instance, error) {
	set := a.set.Load()
	if set == nil || len(set.list) == 0 && !set.noWeb {
		var err error
		if set, err = a.instances(ctx, true); err != nil {
			return nil, fmt.Errorf("%w: %w", errNoInstance, err)
		}
	}
	if in := set.pick(time.Now().UnixNano(), a.turn.Add(1), skip); in != nil {
		return in, nil
	}
	set, err := a.instances(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoInstance, err)
	}
	if set.noWeb {
		return nil, edgelink.ErrNoWeb
	}
	if in := set.pick(time.Now().UnixNano(), a.turn.Add(1), skip); in != nil {
		return in, nil
	}
	if in := set.soonestBack(skip); in != nil {
		return in, nil
	}
	return nil, errNoInstance
}

// failed takes an instance that failed a request out: a gone one is dropped and the app
// woken again (its other instances serve meanwhile); any other for outFor.
func (a *appProxy) failed(ctx context.Context, in *instance, err error) {
	if errors.Is(err, edgelink.ErrGone) {
		a.drop(in)
		a.instances(ctx, true) // its failure, if any, is the next choice's
		return
	}
	now := time.Now()
	// Tried again while out (every instance was), it stays out from now; taken out is
	// counted and logged only when it was in.
	if was := in.outUntil.Swap(now.Add(outFor).UnixNano()); was <= now.UnixNano() {
		instanceEjections.Inc()
		a.log.Warn("edge: an instance failed a request and is out for a while", "app", a.appID,
			"instance", in.id, "for", outFor.String(), "err", err.Error())
	}
}

// retryable says whether a request that failed on one instance may go to another without
// the app seeing it twice.
func retryable(req *http.Request, body *heldBody, err error) bool {
	if body != nil && body.touched.Load() {
		return false // some of it may have been sent
	}
	var de *dialError
	if errors.As(err, &de) {
		return true // no connection, so nothing was sent
	}
	return body == nil && idempotent[req.Method]
}

// idempotent are the methods whose repetition has the effect of one (RFC 9110, 9.2.2).
var idempotent = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true, http.MethodTrace: true,
	http.MethodPut: true, http.MethodDelete: true,
}

// roundTrip sends the request on the instance's own transport, counting it outstanding
// until its answer's body is closed (for an upgrade, until the connection is).
func (in *instance) roundTrip(req *http.Request) (*http.Response, error) {
	in.outstanding.Add(1)
	in.sent.Add(1)
	resp, err := in.transport.RoundTrip(req)
	if err != nil {
		in.outstanding.Add(-1)
		return nil, err
	}
	done := &doneBody{ReadCloser: resp.Body, in: in}
	if rw, ok := resp.Body.(io.ReadWriteCloser); ok && resp.StatusCode == http.StatusSwitchingProtocols {
		// The reverse proxy takes an upgrade's body as the connection to write to.
		resp.Body = upgradeBody{doneBody: done, Writer: rw}
	} else {
		resp.Body = done
	}
	return resp, nil
}

// doneBody ends its request's outstanding count when closed (once).
type doneBody struct {
	io.ReadCloser
	in     *instance
	closed atomic.Bool
}

func (b *doneBody) Close() error {
	err := b.ReadCloser.Close()
	if b.closed.CompareAndSwap(false, true) {
		b.in.outstanding.Add(-1)
	}
	return err
}

type upgradeBody struct {
	*doneBody
	io.Writer
}

// heldBody lets a request's body outlive a failed attempt (the transport closes the body it
// was given when its dial fails, which would leave nothing for another instance); the
// reverse proxy closes the visitor's own body when it is done. touched: some of it was
// read, so some may have been sent.
type heldBody struct {
	body    io.ReadCloser
	touched atomic.Bool
}

func (b *heldBody) Read(p []byte) (int, error) {
	b.touched.Store(true)
	return b.body.Read(p)
}

func (b *heldBody) Close() error { return nil }

// holdBody is the request each attempt sends: req itself when it has no body, else a copy
// whose body is held.
func holdBody(req *http.Request) (*http.Request, *heldBody) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	held := &heldBody{body: req.Body}
	out := *req
	out.Body = held
	return &out, held
}
