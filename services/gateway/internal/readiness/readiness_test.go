package readiness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// service is a fake upstream whose /readyz answers as told, counting the probes.
type service struct {
	srv    *httptest.Server
	ready  atomic.Bool
	probes atomic.Int64
}

func newService(t *testing.T, ready bool) *service {
	s := &service{}
	s.ready.Store(ready)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		s.probes.Add(1)
		if !s.ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func TestReadyOnlyWhenEveryServiceIs(t *testing.T) {
	apps, logs := newService(t, true), newService(t, false)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	now := time.Unix(0, 0)
	c := New(http.DefaultTransport, map[string]string{"apps": apps.srv.URL, "logs": logs.srv.URL, "billing": down.URL}, time.Second)
	c.now = func() time.Time { return now }

	if r := c.Check(context.Background()); r.Ready || !reflect.DeepEqual(r.Waiting, []string{"billing", "logs"}) {
		t.Fatalf("report %+v", r)
	}
	logs.ready.Store(true)
	// Within the TTL the answer is the kept one, and no service is asked again.
	before := logs.probes.Load()
	if r := c.Check(context.Background()); r.Ready || logs.probes.Load() != before {
		t.Fatalf("cached report %+v, probes %d -> %d", r, before, logs.probes.Load())
	}
	now = now.Add(time.Second)
	if r := c.Check(context.Background()); r.Ready || !reflect.DeepEqual(r.Waiting, []string{"billing"}) {
		t.Fatalf("after the TTL: %+v", r)
	}
	c.services["billing"] = apps.srv.URL
	now = now.Add(time.Second)
	if r := c.Check(context.Background()); !r.Ready || len(r.Waiting) != 0 {
		t.Fatalf("all ready: %+v", r)
	}
}

// A burst of /readyz asks each service once per TTL, however many callers there are.
func TestABurstProbesOncePerTTL(t *testing.T) {
	apps := newService(t, true)
	c := New(http.DefaultTransport, map[string]string{"apps": apps.srv.URL}, time.Hour)
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !c.Check(context.Background()).Ready {
				t.Error("not ready")
			}
		}()
	}
	wg.Wait()
	if n := apps.probes.Load(); n != 1 {
		t.Fatalf("%d probes for 200 checks", n)
	}
}
