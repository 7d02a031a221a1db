package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

const idemHeader = "Idempotency-Key"

// post sends a POST with an Idempotency-Key (none when idemKey is empty).
func (h *harness) post(path, token, idemKey, body string, headers ...string) response {
	h.t.Helper()
	if idemKey != "" {
		headers = append(headers, idemHeader, idemKey)
	}
	return h.do("POST", path, token, strings.NewReader(body), headers...)
}

func sameAnswer(t *testing.T, first, again response) {
	t.Helper()
	if again.Status != first.Status || string(again.Body) != string(first.Body) ||
		again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("repeat %d %q %s, first %d %q %s", again.Status, again.Header.Get("Content-Type"), again.Body,
			first.Status, first.Header.Get("Content-Type"), first.Body)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("Idempotent-Replayed marks only the repeat")
	}
}

func conflict(t *testing.T, r response, code string) {
	t.Helper()
	expect(t, r, 409, "")
	if m := r.json(t); m["error"] != code || m["code"] != code || m["message"] == "" {
		t.Fatalf("409 body %s, want %s", r.Body, code)
	}
}

func TestIdempotencyRules(t *testing.T) {
	h := start(t, options{})
	acted := func() int64 { return h.up.acted.Load() }

	t.Run("the same request again gets the first answer without acting", func(t *testing.T) {
		first := h.post("/api/apps?status=201", "svc_alice", "k-same", `{"name":"a"}`)
		expect(t, first, 201, "")
		before := acted()
		for i := 0; i < 3; i++ {
			sameAnswer(t, first, h.post("/api/apps?status=201", "svc_alice", "k-same", `{"name":"a"}`))
		}
		if acted() != before {
			t.Fatal("a repeat reached the service")
		}
	})
	t.Run("another body, or another target, under the same key is refused", func(t *testing.T) {
		expect(t, h.post("/api/apps?status=201", "svc_alice", "k-other", `{"name":"a"}`), 201, "")
		before := acted()
		conflict(t, h.post("/api/apps?status=201", "svc_alice", "k-other", `{"name":"b"}`), "idempotency_key_reused")
		conflict(t, h.post("/api/tokens?status=201", "svc_alice", "k-other", `{"name":"a"}`), "idempotency_key_reused")
		if acted() != before {
			t.Fatal("a refused request reached the service")
		}
	})
	t.Run("a scoped token's keys are its own, apart from its person's full token", func(t *testing.T) {
		first := h.post("/api/apps?status=201", "svc_carol", "k-scoped", `{"name":"a"}`)
		expect(t, first, 201, "")
		before := acted()
		expect(t, h.post("/api/apps?status=201", "svc_carol_deploy", "k-scoped", `{"name":"a"}`), 201, "")
		if acted() != before+1 {
			t.Fatal("the scoped token was answered from the full token's request")
		}
		before = acted()
		expect(t, h.post("/api/apps?status=201", "svc_carol_deploy", "k-scoped", `{"name":"a"}`), 201, "")
		if acted() != before {
			t.Fatal("the scoped token's own repeat acted again")
		}
	})
	t.Run("without the header every request acts", func(t *testing.T) {
		before := acted()
		h.post("/api/apps?status=201", "svc_alice", "", `{}`)
		h.post("/api/apps?status=201", "svc_alice", "", `{}`)
		if acted() != before+2 {
			t.Fatal("requests without a key did not both act")
		}
	})
	t.Run("a 2xx without a body and a 4xx are kept, a 5xx is not", func(t *testing.T) {
		empty := h.post("/api/apps?status=204", "svc_alice", "k-204", `{}`)
		sameAnswer(t, empty, h.post("/api/apps?status=204", "svc_alice", "k-204", `{}`))
		first := h.post("/api/apps?status=422", "svc_alice", "k-4xx", `{}`)
		sameAnswer(t, first, h.post("/api/apps?status=422", "svc_alice", "k-4xx", `{}`))
		before := acted()
		a := h.post("/api/apps?status=500", "svc_alice", "k-5xx", `{}`)
		b := h.post("/api/apps?status=500", "svc_alice", "k-5xx", `{}`)
		if acted() != before+2 || string(a.Body) == string(b.Body) {
			t.Fatal("a retry after a 5xx did not act again")
		}
	})
	t.Run("keys are per account", func(t *testing.T) {
		before := acted()
		a := h.post("/api/apps?status=201", "svc_alice", "k-shared", `{}`)
		b := h.post("/api/apps?status=201", "tok_bob", "k-shared", `{}`)
		if acted() != before+2 || a.json(t)["account"] != "acct-a" || b.json(t)["account"] != "acct-b" {
			t.Fatalf("two accounts' keys collided: %s %s", a.Body, b.Body)
		}
	})
	t.Run("an answer over 1 MiB is not kept and its key refuses a retry", func(t *testing.T) {
		expect(t, h.post("/api/apps?status=201&size=1100000", "svc_alice", "k-big", `{}`), 201, "")
		before := acted()
		r := h.post("/api/apps?status=201&size=1100000", "svc_alice", "k-big", `{}`)
		conflict(t, r, "idempotency_key_reused")
		if !strings.Contains(r.json(t)["message"].(string), "1 MiB") || acted() != before {
			t.Fatalf("over-size repeat: %s", r.Body)
		}
	})
	t.Run("an invalid key is a 400", func(t *testing.T) {
		r := h.post("/api/apps?status=201", "svc_alice", strings.Repeat("k", 256), `{}`)
		expect(t, r, 400, "")
		if r.json(t)["error"] != "invalid_idempotency_key" {
			t.Fatalf("%s", r.Body)
		}
	})
	t.Run("an answer given before the whole body passed is not kept", func(t *testing.T) {
		// The service refuses from the headers; 32 MiB cannot all pass before it closes, so
		// the hash of what passed is not the request's and nothing may be kept under it.
		for i := 0; i < 2; i++ {
			before := h.up.count()
			req, _ := http.NewRequestWithContext(context.Background(), "POST", h.url+"/api/apps/early/deploys", io.LimitReader(filler{}, 32<<20))
			req.ContentLength = 32 << 20
			req.Header.Set("Authorization", "Bearer svc_alice")
			req.Header.Set(idemHeader, "k-early")
			if resp, err := h.client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 413 || resp.Header.Get("Idempotent-Replayed") != "" {
					t.Fatalf("try %d: %d replayed=%q", i, resp.StatusCode, resp.Header.Get("Idempotent-Replayed"))
				}
			}
			testinfra.Eventually(t, 5*time.Second, "the try reaches the service", func() bool { return h.up.count() == before+1 })
		}
	})
}

// Public sign-in routes have no account: their keys are per client address.
func TestIdempotencyKeysOnPublicRoutesArePerAddress(t *testing.T) {
	h := start(t, options{trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }
	first := h.post("/api/auth/magic-link?status=202", "", "k-pub", `{"email":"a@example.com"}`, from("198.51.100.1")...)
	before := h.up.acted.Load()
	sameAnswer(t, first, h.post("/api/auth/magic-link?status=202", "", "k-pub", `{"email":"a@example.com"}`, from("198.51.100.1")...))
	if h.up.acted.Load() != before {
		t.Fatal("repeat acted")
	}
	other := h.post("/api/auth/magic-link?status=202", "", "k-pub", `{"email":"a@example.com"}`, from("198.51.100.2")...)
	if other.Header.Get("Idempotent-Replayed") != "" || h.up.acted.Load() != before+1 {
		t.Fatal("another address shared the key")
	}
}

// While the first request under a key runs, another with the key is refused; once it has
// answered, the key repeats its answer. A holder whose lease lapsed (its gateway died) no
// longer blocks the key.
func TestIdempotencyWhileTheFirstRequestRuns(t *testing.T) {
	h := start(t, options{})
	var (
		wg    sync.WaitGroup
		first response
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		first = h.post("/api/apps?status=201&hold=1", "svc_alice", "k-run", `{}`)
	}()
	h.waitActed(1)
	conflict(t, h.post("/api/apps?status=201&hold=1", "svc_alice", "k-run", `{}`), "request_in_progress")
	close(h.up.hold)
	wg.Wait()
	sameAnswer(t, first, h.post("/api/apps?status=201&hold=1", "svc_alice", "k-run", `{}`))

	// A lapsed lease: the holder is still running here, but its renewals are due every ten
	// seconds and the clock jumps past the whole lease at once.
	h.up.hold = make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.post("/api/apps?status=201&hold=1", "svc_alice", "k-lapse", `{}`)
	}()
	h.waitActed(2)
	h.clk.advance(31 * time.Second)
	second := h.post("/api/apps?status=201", "svc_alice", "k-lapse", `{}`)
	if second.Status != 201 || second.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("a lapsed key was not taken over: %d %s", second.Status, second.Body)
	}
	close(h.up.hold)
	wg.Wait()
	// The first holder finished after losing the key: the answer kept is the second's.
	sameAnswer(t, second, h.post("/api/apps?status=201", "svc_alice", "k-lapse", `{}`))
}

func (h *harness) waitActed(n int64) {
	h.t.Helper()
	testinfra.Eventually(h.t, 5*time.Second, "the service sees the request", func() bool { return h.up.acted.Load() >= n })
}
