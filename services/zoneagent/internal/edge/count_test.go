package edge

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

// observed records what the edge counted.
type observed struct {
	mu   sync.Mutex
	seen map[string][]int // app → statuses
}

func (o *observed) Observe(appID string, status int, elapsed time.Duration, end time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string][]int{}
	}
	if elapsed < 0 || end.IsZero() {
		panic("bad latency or end")
	}
	o.seen[appID] = append(o.seen[appID], status)
}

// serviceFunc is a service app's answer.
type serviceFunc func(w http.ResponseWriter, r *http.Request)

func (f serviceFunc) ServeHTTP(w http.ResponseWriter, r *http.Request, _ Route) { f(w, r) }

// Every answer the edge gives for an app's host is counted once, under the app's id, with
// its status: a static file, a missing one, a proxied answer (written or not), a paused
// app's 503, through a custom hostname too. A host of no app, the HTTPS redirect and an
// answered ACME challenge are not.
func TestEveryAnswerOfAnAppIsCounted(t *testing.T) {
	ts := newTestSites(t)
	ts.publish(t, "static1", "d1", map[string]string{"index.html": "home"})
	table := NewTable()
	table.Replace([]Route{
		{AppID: "static1", Slug: "site", DeployID: "d1", Kind: revision.KindStatic},
		{AppID: "svc1", Slug: "svc", DeployID: "d2", Kind: revision.KindSource},
		{AppID: "held1", Slug: "held", DeployID: "d3", Kind: revision.KindStatic},
	}, map[string]string{"www.example.com": "static1"})
	table.Pause(map[string]time.Time{"held1": time.Now().Add(-time.Minute)})
	counts := &observed{}
	e := &Edge{Domain: "apps.test", Sites: ts.cache, Table: table, Counts: counts,
		Services: serviceFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/created":
				w.WriteHeader(http.StatusCreated)
			case "/early":
				w.WriteHeader(http.StatusEarlyHints)
				w.WriteHeader(http.StatusBadGateway)
			case "/flush":
				http.NewResponseController(w).Flush()
			}
			// "/": writes nothing, which is a 200
		})}
	get := func(h http.Handler, host, path string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Host = host
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, c := range []struct {
		host, path string
		status     int
	}{
		{"site.apps.test", "/", 200},
		{"site.apps.test", "/missing", 404},
		{"www.example.com", "/", 200},
		{"svc.apps.test", "/created", 201},
		{"svc.apps.test", "/early", -1}, // the recorder keeps the 103; the count must be 502
		{"svc.apps.test", "/flush", 200},
		{"svc.apps.test", "/", 200},
		{"held.apps.test", "/", 503},
		{"nobody.apps.test", "/", 404},
	} {
		if got := get(e, c.host, c.path); got != c.status && c.status != -1 {
			t.Fatalf("%s%s: %d, want %d", c.host, c.path, got, c.status)
		}
	}
	redirect := Redirect{Edge: e, HTTPSPort: 443, Challenge: func(w http.ResponseWriter, r *http.Request) bool {
		w.Write([]byte("token"))
		return true
	}}
	if got := get(redirect, "site.apps.test", "/"); got != http.StatusPermanentRedirect {
		t.Fatalf("redirect: %d", got)
	}
	if got := get(redirect, "site.apps.test", "/.well-known/acme-challenge/x"); got != 200 {
		t.Fatalf("challenge: %d", got)
	}
	want := map[string][]int{"static1": {200, 404, 200}, "svc1": {201, 502, 200, 200}, "held1": {503}}
	if len(counts.seen) != len(want) {
		t.Fatalf("counted %v, want %v", counts.seen, want)
	}
	for app, statuses := range want {
		got := counts.seen[app]
		if len(got) != len(statuses) {
			t.Fatalf("%s counted %v, want %v", app, got, statuses)
		}
		for i := range statuses {
			if got[i] != statuses[i] {
				t.Fatalf("%s counted %v, want %v", app, got, statuses)
			}
		}
	}
}

// Without a counter (EDGE_METRICS=off) the edge answers as before.
func TestNoCounterCountsNothing(t *testing.T) {
	e := httpsTestEdge()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "site.apps.test"
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound { // no site store: the edge's plain 404
		t.Fatalf("status %d", rec.Code)
	}
}

// An upgrade the app accepts (the proxy hijacks the connection through the writer) is
// counted as 1xx once the connection is handed back, and a streamed answer is flushed
// through the counting writer.
func TestUpgradeIsCountedAs1xx(t *testing.T) {
	table := NewTable()
	table.Replace([]Route{{AppID: "svc1", Slug: "svc", DeployID: "d2", Kind: revision.KindSource}}, nil)
	counts := &observed{}
	e := &Edge{Domain: "apps.test", Table: table, Counts: counts, Services: serviceFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack through the counting writer: %v", err)
			return
		}
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		rw.Flush()
		conn.Close()
	})}
	srv := httptest.NewServer(e)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Host = "svc.apps.test"
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", res.StatusCode)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		counts.mu.Lock()
		got := counts.seen["svc1"]
		counts.mu.Unlock()
		if len(got) == 1 && got[0] == http.StatusSwitchingProtocols {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("counted %v, want one 101", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
