package edgeproxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"tori.dev/services/zoneagent/internal/edgelink"
)

// instance is one web instance of an app as the edge reaches it: its own pool of
// connections (a connection to one instance is never used for another), the requests it has
// not finished answering, and until when it is out after failing to take a connection.
type instance struct {
	id          string
	transport   *http.Transport
	outstanding atomic.Int64
	sent        atomic.Int64 // requests sent to it: equals share by it
	outUntil    atomic.Int64 // unix nanoseconds; past it, the instance is in again
}

// instanceSet is what the last wake answered: the app's live web instances, or that it runs
// none (noWeb). A set is never changed once stored; a change stores another.
type instanceSet struct {
	list  []*instance
	noWeb bool
}

// dialError is a failure to get a connection to an instance (through the link): nothing of
// the request was sent, so another instance may take it whatever it is.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// newInstance is an instance with its own transport, every connection of which the runtime
// makes for exactly this instance.
func (a *appProxy) newInstance(id string) *instance {
	in := &instance{id: id}
	in.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := a.link.Dial(ctx, id)
			if err != nil {
				return nil, &dialError{err: err}
			}
			return c, nil
		},
		MaxIdleConnsPerHost: instanceIdleConns,
		IdleConnTimeout:     30 * time.Second,
	}
	return in
}

// pick is the instance for a request among those in (not skip): one of the least loaded,
// and among them the one sent the fewest requests (then the first from start, a counter
// that turns). Least loaded is at most a quarter plus one more outstanding than the fewest:
// that much is what requests arriving together make, while a slow or stuck instance falls
// further behind and gets nothing until it catches up. Without that margin, instances that
// answer alike drift apart on scheduling noise (300 requests from 12 visitors once split
// 167/67/66); with it and the count of requests sent they share evenly. nil when every one
// is out.
func (s *instanceSet) pick(now int64, start uint64, skip *instance) *instance {
	n := uint64(len(s.list))
	var least *instance
	var fewest int64
	for _, in := range s.list {
		if in == skip || in.outUntil.Load() > now {
			continue
		}
		if o := in.outstanding.Load(); least == nil || o < fewest {
			least, fewest = in, o
		}
	}
	if least == nil {
		return nil
	}
	var best *instance
	var bestSent int64
	for k := range n {
		in := s.list[(start+k)%n]
		if in == skip || in.outUntil.Load() > now || in.outstanding.Load() > fewest+1+fewest/4 {
			continue
		}
		if sent := in.sent.Load(); best == nil || sent < bestSent {
			best, bestSent = in, sent
		}
	}
	if best == nil { // the loads moved between the two looks
		return least
	}
	return best
}

// soonestBack is, when every instance is out, the one whose time out ends first (not
// skip): trying it beats refusing the visitor outright.
func (s *instanceSet) soonestBack(skip *instance) *instance {
	var best *instance
	for _, in := range s.list {
		if in != skip && (best == nil || in.outUntil.Load() < best.outUntil.Load()) {
			best = in
		}
	}
	return best
}

// instances is the app's set: the one last learned while it is under wakeEvery old; else
// (or when forced: an instance went, or none is left) asked of the runtime, by one request
// while the others go on with the set they have. The asking is also what tells the runtime
// the app is used. A set that says noWeb is kept a second like any other, so an app without
// web is not asked about on every request.
func (a *appProxy) instances(ctx context.Context, force bool) (*instanceSet, error) {
	cur := a.set.Load()
	gen := a.wakes.Load()
	if cur != nil && !force {
		last := a.lastWake.Load()
		now := time.Now().UnixNano()
		if now-last < int64(wakeEvery) || !a.lastWake.CompareAndSwap(last, now) {
			return cur, nil // fresh, or another request asks
		}
	}
	a.wakeMu.Lock()
	defer a.wakeMu.Unlock()
	if s := a.set.Load(); s != nil && a.wakes.Load() != gen {
		return s, nil // learned while this one waited
	}
	ids, err := a.wake(ctx)
	switch {
	case errors.Is(err, edgelink.ErrNoWeb):
		a.store(&instanceSet{noWeb: true})
		return nil, err
	case err != nil:
		return nil, err
	}
	return a.learn(ids), nil
}

// learn stores the instances a wake answered: one already known keeps its connections, its
// outstanding count and its time out; one no longer named has its idle connections closed.
func (a *appProxy) learn(ids []string) *instanceSet {
	known := map[string]*instance{}
	old := a.set.Load()
	if old != nil {
		for _, in := range old.list {
			known[in.id] = in
		}
	}
	next := &instanceSet{list: make([]*instance, 0, len(ids))}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		in := known[id]
		if in == nil {
			in = a.newInstance(id)
			// It joins as if it had kept up with the others: not a flood of every request
			// until its count reaches theirs.
			in.sent.Store(leastSent(old))
		}
		next.list = append(next.list, in)
	}
	a.store(next)
	return next
}

// store makes next the app's set (wakeMu held), closing the idle connections of every
// instance it no longer has.
func (a *appProxy) store(next *instanceSet) {
	if old := a.set.Load(); old != nil {
		for _, in := range old.list {
			if !next.has(in) {
				in.transport.CloseIdleConnections()
			}
		}
	}
	a.set.Store(next)
	a.wakes.Add(1)
	a.lastWake.Store(time.Now().UnixNano())
}

// leastSent is the fewest requests any instance of s was sent (0 for none).
func leastSent(s *instanceSet) int64 {
	least := int64(-1)
	if s != nil {
		for _, in := range s.list {
			if n := in.sent.Load(); least < 0 || n < least {
				least = n
			}
		}
	}
	return max(least, 0)
}

func (s *instanceSet) has(in *instance) bool {
	for _, x := range s.list {
		if x == in {
			return true
		}
	}
	return false
}

// drop takes a gone instance out of the app's set (the runtime said it no longer runs):
// requests stop going to it at once, before the wake that follows answers.
func (a *appProxy) drop(gone *instance) {
	for {
		cur := a.set.Load()
		if cur == nil || !cur.has(gone) {
			break
		}
		next := &instanceSet{list: make([]*instance, 0, len(cur.list)-1)}
		for _, in := range cur.list {
			if in != gone {
				next.list = append(next.list, in)
			}
		}
		if a.set.CompareAndSwap(cur, next) {
			break
		}
	}
	gone.transport.CloseIdleConnections()
}

// closeIdle closes every instance's idle connections (the app's revision was replaced).
func (a *appProxy) closeIdle() {
	if s := a.set.Load(); s != nil {
		for _, in := range s.list {
			in.transport.CloseIdleConnections()
		}
	}
}

// wake asks the runtime for the app's live web instances, or its preview's.
func (a *appProxy) wake(ctx context.Context) ([]string, error) {
	if a.previewID == "" {
		return a.link.Wake(ctx, a.appID)
	}
	pl, ok := a.link.(PreviewLink)
	if !ok {
		return nil, edgelink.ErrGone
	}
	return pl.WakePreview(ctx, a.appID, a.previewID)
}
