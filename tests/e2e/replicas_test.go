package e2e

import (
	"net/http"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// The test that runs on a two-replica stack (harness.Options.Replicas; docs/configuration.md, "Two zones and replicas"):
// two processes of every control-plane service and two gateways, each gateway routing to
// one process of each. Work done through either gateway takes effect once (competing
// consumers, two outbox relays per service), an idempotency key and an account's rate-limit
// window hold across the gateways, and with one deploys process killed the other carries a
// deploy from upload to live alone.
func TestTwoReplicasOfEveryService(t *testing.T) {
	s := harness.Start(t, harness.Options{Replicas: 2, Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000"}})
	if len(s.Gateways) != 2 {
		t.Fatalf("gateways %v", s.Gateways)
	}
	via := []*harness.Stack{s.Via(0), s.Via(1)}
	a := via[0].NewAccount(t, "replicas")
	if out, err := s.Command("billing", "set-plan", "-account", a.Email, "-plan", "flock"); err != nil {
		t.Fatalf("set-plan: %v\n%s", err, out)
	}
	if r := via[1].Get(t, "/api/account", a.Token); r.Status != http.StatusOK {
		t.Fatalf("the second gateway and a token the first signed in: %d %s", r.Status, r.Body)
	}

	// One key, one app, whichever gateway the retry reaches.
	create := harness.Request{Method: http.MethodPost, Path: "/api/apps", Token: a.Token, Body: map[string]string{"kind": "static", "name": "replica-idem"}}
	first := idem(t, via[0], "replica-create", create)
	if first.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", first.Status, first.Body)
	}
	sameAnswer(t, first, idem(t, via[1], "replica-create", create))
	if n := countApps(t, via[1], a.Token, "replica-idem"); n != 1 {
		t.Fatalf("%d apps for one idempotency key across two gateways", n)
	}

	// Apps made and deployed through both gateways at once: each deploy is recorded once,
	// goes live once and is served.
	slugs := []string{first.Map(t)["slug"].(string)}
	for i := 1; i < 4; i++ {
		slugs = append(slugs, createApp(t, via[i%2], a.Token, "static"))
	}
	ids := make([]string, len(slugs))
	for i, slug := range slugs {
		r := deployFiles(t, via[i%2], a.Token, slug, sitePart{"index.html", "replica " + slug})
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy %s: %d %s", slug, r.Status, r.Body)
		}
		ids[i] = r.Map(t)["id"].(string)
	}
	for i, slug := range slugs {
		waitStatus(t, via[(i+1)%2], a.Token, slug, ids[i], "live")
		waitEdge(t, s, slug, "/", "replica "+slug)
		var list []map[string]any
		via[i%2].Get(t, "/api/apps/"+slug+"/deploys", a.Token).JSON(t, &list)
		if len(list) != 1 {
			t.Fatalf("%s has %d deploys after one upload: %v", slug, len(list), list)
		}
	}

	// Written through one gateway, read through the other at once.
	if r := via[1].Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slugs[0] + "/env", Token: a.Token, Body: map[string]string{"key": "ACROSS", "value": "replicas"}}); r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("set env: %d %s", r.Status, r.Body)
	}
	if _, ok := envValue(t, via[0], a.Token, slugs[0], "ACROSS"); !ok {
		t.Fatal("a variable written through one gateway is not read through the other")
	}

	// One account's window of 120 writes a minute, drawn on through both gateways.
	b := via[0].NewAccount(t, "replica-limits")
	inOneWindow(t, 30*time.Second)
	write := harness.Request{Method: http.MethodPatch, Path: "/api/account", Token: b.Token, Body: map[string]string{"defaultRegion": "us"}}
	for i, g := range via {
		if counts := burst(t, g, 60, write, nil); counts[http.StatusOK] != 60 {
			t.Fatalf("60 writes through gateway %d: %v", i, counts)
		}
	}
	for _, g := range via {
		expectRateLimited(t, g.Do(t, write), "rate_limited")
	}

	// One deploys process gone: the other takes the upload, relays its command, consumes the
	// zone's progress and records the deploy live.
	s.Kill("deploys")
	r := deployFiles(t, via[1], a.Token, slugs[1], sitePart{"index.html", "after the kill"})
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy with one deploys process: %d %s", r.Status, r.Body)
	}
	waitStatus(t, via[1], a.Token, slugs[1], r.Map(t)["id"].(string), "live")
	waitEdge(t, s, slugs[1], "/", "after the kill")
	// The first gateway's deploys process is gone, and it says so rather than guess.
	expectError(t, via[0].Get(t, "/api/apps/"+slugs[1]+"/deploys", a.Token), http.StatusServiceUnavailable, "service_unavailable")
}
