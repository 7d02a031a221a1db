package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// idem sends req with an Idempotency-Key.
func idem(t *testing.T, s *harness.Stack, key string, req harness.Request) *harness.Response {
	t.Helper()
	if req.Header == nil {
		req.Header = map[string]string{}
	}
	req.Header["Idempotency-Key"] = key
	return s.Do(t, req)
}

func sameAnswer(t *testing.T, first, again *harness.Response) {
	t.Helper()
	if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) ||
		again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("repeat %d %q %s\nfirst  %d %q %s", again.Status, again.Header.Get("Content-Type"), again.Body,
			first.Status, first.Header.Get("Content-Type"), first.Body)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("a repeat is not marked Idempotent-Replayed")
	}
}

// countApps counts the account's apps named name.
func countApps(t *testing.T, s *harness.Stack, token, name string) int {
	t.Helper()
	r := s.Get(t, "/api/apps", token)
	var apps []map[string]any
	r.JSON(t, &apps)
	n := 0
	for _, a := range apps {
		if a["name"] == name {
			n++
		}
	}
	return n
}

func TestIdempotencyKeys(t *testing.T) {
	s := defaultStack(t)

	t.Run("an app create retried with the same key creates one app", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "idem-app")
		name := "idem-" + harness.Hex(3)
		create := harness.Request{Method: http.MethodPost, Path: "/api/apps", Token: a.Token, Body: map[string]string{"name": name}}
		first := idem(t, s, "create-1", create)
		if first.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", first.Status, first.Body)
		}
		for i := 0; i < 3; i++ {
			sameAnswer(t, first, idem(t, s, "create-1", create))
		}
		if n := countApps(t, s, a.Token, name); n != 1 {
			t.Fatalf("%d apps named %s", n, name)
		}
		other := create
		other.Body = map[string]string{"name": name + "-2"}
		expectError(t, idem(t, s, "create-1", other), http.StatusConflict, "idempotency_key_reused")
		if n := countApps(t, s, a.Token, name+"-2"); n != 0 {
			t.Fatal("a refused reuse created an app")
		}
	})

	t.Run("a static deploy retried with the same key creates one deploy", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "idem-deploy")
		slug := createApp(t, s, a.Token, "static")
		ct, body := multipartBody("files", []sitePart{{"index.html", "<h1>once</h1>"}})
		deploy := func() *harness.Response {
			return idem(t, s, "deploy-1", harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: a.Token,
				Body: bytes.NewReader(body), Header: map[string]string{"Content-Type": ct}})
		}
		first := deploy()
		if first.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", first.Status, first.Body)
		}
		sameAnswer(t, first, deploy())
		sameAnswer(t, first, deploy())
		var deploys []map[string]any
		s.Get(t, "/api/apps/"+slug+"/deploys", a.Token).JSON(t, &deploys)
		if len(deploys) != 1 {
			t.Fatalf("%d deploys after three tries with one key", len(deploys))
		}
	})

	t.Run("a request under a key that is still running is refused", func(t *testing.T) {
		t.Parallel()
		ct, body := multipartBody("files", []sitePart{{"index.html", "<h1>slow</h1>" + strings.Repeat("<!-- padding -->", 8<<10)}})
		upload := func(a harness.Account, slug, key string) *harness.Response {
			return idem(t, s, key, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: a.Token,
				Body: bytes.NewReader(body), Header: map[string]string{"Content-Type": ct}})
		}
		// The first upload is held open half way (past the 8 KiB the gateway reads before it
		// acts). Its claim on the key races the second request's through the gateway, so a
		// round in which the second one claimed first (and acted, as it should) is set aside
		// and played again with a fresh account, app and key (a fresh account, because the lost
		// round's deploy still counts against its concurrent deploys); the rule is checked in a
		// round the held request won.
		for round := 1; ; round++ {
			a := s.NewAccount(t, fmt.Sprintf("idem-running-%d", round))
			slug := createApp(t, s, a.Token, "static")
			key := fmt.Sprintf("deploy-run-%d", round)
			pr, pw := io.Pipe()
			done := make(chan *http.Response, 1)
			go func() {
				req, _ := http.NewRequest(http.MethodPost, s.Gateway+"/api/apps/"+slug+"/deploys", pr)
				req.ContentLength = int64(len(body))
				req.Header.Set("Content-Type", ct)
				req.Header.Set("Authorization", "Bearer "+a.Token)
				req.Header.Set("Idempotency-Key", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
				}
				done <- resp
			}()
			if _, err := pw.Write(body[:len(body)/2]); err != nil {
				t.Fatal(err)
			}
			second := upload(a, slug, key)
			pw.Write(body[len(body)/2:])
			pw.Close()
			first := <-done
			if first == nil {
				t.FailNow()
			}
			b, _ := io.ReadAll(first.Body)
			first.Body.Close()
			if second.Status != http.StatusConflict && round < 10 {
				t.Logf("round %d: the second request claimed the key first (%d); again", round, second.Status)
				continue
			}
			expectError(t, second, http.StatusConflict, "request_in_progress")
			if first.StatusCode != http.StatusCreated {
				t.Fatalf("the held request: %d %s", first.StatusCode, b)
			}
			var deploys []map[string]any
			s.Get(t, "/api/apps/"+slug+"/deploys", a.Token).JSON(t, &deploys)
			if len(deploys) != 1 {
				t.Fatalf("%d deploys", len(deploys))
			}
			return
		}
	})

	t.Run("keys are per account", func(t *testing.T) {
		t.Parallel()
		a, b := s.NewAccount(t, "idem-a"), s.NewAccount(t, "idem-b")
		body := map[string]string{"kind": "static"} // the same body for both; each gets a slug of its own
		ra := idem(t, s, "same-key", harness.Request{Method: http.MethodPost, Path: "/api/apps", Token: a.Token, Body: body})
		rb := idem(t, s, "same-key", harness.Request{Method: http.MethodPost, Path: "/api/apps", Token: b.Token, Body: body})
		if ra.Status != http.StatusCreated || rb.Status != http.StatusCreated || rb.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("two accounts, one key: %d %s / %d %s", ra.Status, ra.Body, rb.Status, rb.Body)
		}
		if ra.Map(t)["id"] == rb.Map(t)["id"] {
			t.Fatal("two accounts got one app")
		}
		for _, tok := range []string{a.Token, b.Token} {
			var apps []map[string]any
			s.Get(t, "/api/apps", tok).JSON(t, &apps)
			if len(apps) != 1 {
				t.Fatalf("an account has %d apps, want its own one", len(apps))
			}
		}
	})

	t.Run("without a key every POST acts", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "idem-none")
		for i := 0; i < 2; i++ {
			r := post(s, t, "/api/tokens", a.Token, map[string]string{"name": fmt.Sprintf("laptop-%d", i)})
			if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("token %d: %d %s", i, r.Status, r.Body)
			}
		}
	})
}
