package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

func TestAuthentication(t *testing.T) {
	s := defaultStack(t)

	t.Run("public routes need no token", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"/healthz", "/api/plans", "/api/openapi.json"} {
			r := s.Get(t, p, "")
			if r.Status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", p, r.Status, r.Body)
			}
			noRateLimitHeaders(t, r)
		}
		h := s.Get(t, "/healthz", "").Map(t)
		for _, k := range []string{"service", "version", "instance", "startedAt"} {
			if _, ok := h[k]; !ok {
				t.Fatalf("healthz lacks %s: %v", k, h)
			}
		}
		doc := s.Get(t, "/api/openapi.json", "").Map(t)
		if doc["openapi"] != "3.1.0" || doc["info"].(map[string]any)["version"] != "1.0.0" {
			t.Fatalf("openapi document: %v %v", doc["openapi"], doc["info"])
		}
	})

	t.Run("missing, malformed, unknown tokens are 401 unauthorized", func(t *testing.T) {
		t.Parallel()
		cases := map[string]map[string]string{
			"missing":         nil,
			"empty bearer":    {"Authorization": "Bearer "},
			"basic scheme":    {"Authorization": "Basic dXNlcjpwYXNz"},
			"no prefix":       {"Authorization": "Bearer abcdef0123456789"},
			"unknown session": {"Authorization": "Bearer tok_" + strings.Repeat("a", 40)},
			"unknown api":     {"Authorization": "Bearer svc_" + strings.Repeat("b", 40)},
		}
		for name, h := range cases {
			for _, p := range []string{"/api/account", "/api/apps", "/api/tokens", "/api/billing"} {
				r := s.Do(t, harness.Request{Method: http.MethodGet, Path: p, Header: h})
				if e := expectError(t, r, http.StatusUnauthorized, "unauthorized"); e.Error == "" {
					t.Fatalf("%s %s", name, p)
				}
				noRateLimitHeaders(t, r)
			}
		}
	})

	t.Run("magic link creates the account on first verify", func(t *testing.T) {
		t.Parallel()
		email := harness.Email("Ada.Lovelace")
		code := s.MagicCode(t, email)
		r := post(s, t, "/api/auth/magic-link/verify", "", map[string]string{"token": code})
		if r.Status != http.StatusOK {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		v := r.Map(t)
		tok, _ := v["token"].(string)
		if !strings.HasPrefix(tok, "tok_") {
			t.Fatalf("session token %q lacks tok_", tok)
		}
		if _, err := time.Parse(time.RFC3339, v["expiresAt"].(string)); err != nil {
			t.Fatalf("expiresAt: %v", err)
		}
		user := v["user"].(map[string]any)
		expectKeys(t, "user", user, "id", "email", "name")

		// The code is single-use.
		expectError(t, post(s, t, "/api/auth/magic-link/verify", "", map[string]string{"token": code}), http.StatusBadRequest, "invalid_token")
		expectError(t, post(s, t, "/api/auth/magic-link/verify", "", map[string]string{"token": "nonsense"}), http.StatusBadRequest, "invalid_token")

		acc := s.Get(t, "/api/account", tok)
		if acc.Status != http.StatusOK {
			t.Fatalf("account: %d %s", acc.Status, acc.Body)
		}
		a := acc.Map(t)
		expectKeys(t, "account", a, "user", "plan", "defaultRegion", "limits")
		u := a["user"].(map[string]any)
		expectKeys(t, "account.user", u, "id", "email", "name")
		if u["email"] != email || u["name"] != strings.SplitN(email, "@", 2)[0] {
			t.Fatalf("user %v", u)
		}
		if a["plan"] != "nestling" || a["defaultRegion"] != "eu" {
			t.Fatalf("new account: plan %v region %v", a["plan"], a["defaultRegion"])
		}
		limits := a["limits"].(map[string]any)
		if limits["maxCustomDomains"] != float64(0) {
			t.Fatalf("nestling maxCustomDomains = %v", limits["maxCustomDomains"])
		}
		db := limits["database"].(map[string]any)
		if db["connectionLimit"] == nil || db["maxBytes"] == nil {
			t.Fatalf("limits.database: %v", db)
		}
		// The plan's process and cron limits, as billing's catalog gives nestling's.
		for k, want := range map[string]float64{"processTypes": 2, "instancesPerProcess": 1, "instancesTotal": 2,
			"cronJobs": 2, "cronMinIntervalMinutes": 60, "cronTimeoutSeconds": 900, "instanceMemoryBytes": 268435456} {
			if limits[k] != want {
				t.Fatalf("nestling limits.%s = %v, want %v", k, limits[k], want)
			}
		}

		// Signing in again reaches the same account.
		again := s.SignIn(t, email)
		a2 := s.Get(t, "/api/account", again.Token).Map(t)
		if a2["user"].(map[string]any)["id"] != u["id"] {
			t.Fatalf("second sign-in made another user")
		}
	})

	t.Run("magic link never reveals whether an account exists", func(t *testing.T) {
		t.Parallel()
		for _, email := range []string{harness.Email("nobody"), harness.Email("nobody2")} {
			r := post(s, t, "/api/auth/magic-link", "", map[string]string{"email": email})
			if r.Status != http.StatusAccepted || r.Map(t)["ok"] != true {
				t.Fatalf("magic-link %s: %d %s", email, r.Status, r.Body)
			}
		}
		for _, bad := range []any{map[string]string{"email": "not-an-address"}, map[string]string{}, "{", map[string]int{"email": 3}} {
			var r *harness.Response
			if raw, ok := bad.(string); ok {
				r = s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/auth/magic-link", Body: strings.NewReader(raw), Header: map[string]string{"Content-Type": "application/json"}})
			} else {
				r = post(s, t, "/api/auth/magic-link", "", bad)
			}
			if r.Status != http.StatusBadRequest {
				t.Fatalf("bad body %v: %d %s", bad, r.Status, r.Body)
			}
		}
	})

	t.Run("a token acts for its own account only", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "tenant-a")
		b := s.NewAccount(t, "tenant-b")
		ra := s.Get(t, "/api/account", a.Token).Map(t)
		rb := s.Get(t, "/api/account", b.Token).Map(t)
		if ra["user"].(map[string]any)["email"] != a.Email || rb["user"].(map[string]any)["email"] != b.Email {
			t.Fatalf("tokens act for the wrong account")
		}
		// A's API token acts as A, and cannot touch B's tokens.
		created := post(s, t, "/api/tokens", a.Token, map[string]string{"name": "ci"})
		if created.Status != http.StatusCreated {
			t.Fatalf("create token: %d %s", created.Status, created.Body)
		}
		aAPI := created.Map(t)["token"].(string)
		if s.Get(t, "/api/account", aAPI).Map(t)["user"].(map[string]any)["email"] != a.Email {
			t.Fatal("API token acts for another account")
		}
		bTok := post(s, t, "/api/tokens", b.Token, map[string]string{"name": "b"}).Map(t)
		r := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/tokens/" + bTok["id"].(string), Token: a.Token})
		expectError(t, r, http.StatusNotFound, "not found")
		var list []map[string]any
		s.Get(t, "/api/tokens", a.Token).JSON(t, &list)
		for _, tk := range list {
			if tk["id"] == bTok["id"] {
				t.Fatal("A lists B's token")
			}
		}
	})

	t.Run("api tokens: secret shown once, listed by prefix, revoked at once", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "tokens")
		r := post(s, t, "/api/tokens", a.Token, map[string]string{"name": "deploy bot"})
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		tok := r.Map(t)
		expectKeys(t, "created token", tok, "id", "name", "prefix", "createdAt", "token")
		secret := tok["token"].(string)
		if !strings.HasPrefix(secret, "svc_") || tok["prefix"] != secret[:8] {
			t.Fatalf("secret %q prefix %q", secret, tok["prefix"])
		}
		// An API token cannot mint another.
		expectError(t, post(s, t, "/api/tokens", secret, map[string]string{"name": "child"}), http.StatusForbidden, "session_required")

		if s.Get(t, "/api/account", secret).Status != http.StatusOK {
			t.Fatal("fresh API token refused")
		}
		var list []map[string]any
		listed := s.Get(t, "/api/tokens", a.Token)
		listed.JSON(t, &list)
		if strings.Contains(string(listed.Body), secret) {
			t.Fatal("token list carries the secret")
		}
		if len(list) != 1 {
			t.Fatalf("list: %v", list)
		}
		expectKeys(t, "listed token", list[0], "id", "name", "prefix", "createdAt", "lastUsedAt")

		del := s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/tokens/" + tok["id"].(string), Token: a.Token})
		if del.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", del.Status, del.Body)
		}
		start := time.Now()
		harness.Eventually(t, time.Second, "revoked token refused", func() bool {
			return s.Get(t, "/api/account", secret).Status == http.StatusUnauthorized
		})
		t.Logf("revocation took effect after %s", time.Since(start))
		expectError(t, s.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/tokens/" + tok["id"].(string), Token: a.Token}), http.StatusNotFound, "not found")
	})

	t.Run("logout ends the session", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "logout")
		if s.Get(t, "/api/account", a.Token).Status != http.StatusOK {
			t.Fatal("session refused before logout")
		}
		r := post(s, t, "/api/auth/logout", a.Token, nil)
		if r.Status != http.StatusNoContent {
			t.Fatalf("logout: %d %s", r.Status, r.Body)
		}
		harness.Eventually(t, time.Second, "logged-out session refused", func() bool {
			return s.Get(t, "/api/account", a.Token).Status == http.StatusUnauthorized
		})
	})

	t.Run("device flow", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "device")
		api := post(s, t, "/api/tokens", a.Token, map[string]string{"name": "x"}).Map(t)["token"].(string)

		d := post(s, t, "/api/auth/cli/device", "", map[string]string{"clientName": "tori-cli"})
		if d.Status != http.StatusOK {
			t.Fatalf("device: %d %s", d.Status, d.Body)
		}
		dev := d.Map(t)
		expectKeys(t, "device grant", dev, "deviceCode", "userCode", "verificationUri", "verificationUriComplete", "expiresIn", "interval")
		userCode := dev["userCode"].(string)
		if len(userCode) != 9 || userCode[4] != '-' || strings.ToUpper(userCode) != userCode {
			t.Fatalf("userCode %q is not like WXYZ-2345", userCode)
		}
		if !strings.Contains(dev["verificationUriComplete"].(string), userCode) {
			t.Fatalf("verificationUriComplete %v lacks the user code", dev["verificationUriComplete"])
		}
		deviceCode := dev["deviceCode"].(string)

		expectError(t, post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": deviceCode}), http.StatusBadRequest, "authorization_pending")
		// Polling again at once is faster than the interval.
		slow := expectError(t, post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": deviceCode}), http.StatusTooManyRequests, "slow_down")
		if slow.RetryAfter == nil || *slow.RetryAfter < 1 {
			t.Fatalf("slow_down without retryAfter: %+v", slow)
		}

		// An API token can never approve.
		expectError(t, post(s, t, "/api/auth/cli/approve", api, map[string]string{"userCode": userCode}), http.StatusForbidden, "session_required")
		ok := post(s, t, "/api/auth/cli/approve", a.Token, map[string]string{"userCode": userCode})
		if ok.Status != http.StatusOK || ok.Map(t)["ok"] != true {
			t.Fatalf("approve: %d %s", ok.Status, ok.Body)
		}

		interval := time.Duration(dev["interval"].(float64)) * time.Second
		time.Sleep(interval)
		tr := post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": deviceCode})
		if tr.Status != http.StatusOK {
			t.Fatalf("token: %d %s", tr.Status, tr.Body)
		}
		minted := tr.Map(t)
		secret := minted["token"].(string)
		if !strings.HasPrefix(secret, "svc_") || minted["tokenId"] == "" {
			t.Fatalf("minted %v", minted)
		}
		if s.Get(t, "/api/account", secret).Map(t)["user"].(map[string]any)["email"] != a.Email {
			t.Fatal("device token acts for another account")
		}
		// Once only.
		time.Sleep(interval)
		again := post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": deviceCode})
		if again.Status == http.StatusOK {
			t.Fatal("device code exchanged twice")
		}
	})

	t.Run("loopback flow with PKCE", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "loopback")
		api := post(s, t, "/api/tokens", a.Token, map[string]string{"name": "x"}).Map(t)["token"].(string)
		verifier := "verifier-" + strings.Repeat("x", 50)
		challenge := s256(verifier)
		body := func(redirect string) map[string]string {
			return map[string]string{"redirectUri": redirect, "state": "st-123", "codeChallenge": challenge, "codeChallengeMethod": "S256"}
		}
		expectError(t, post(s, t, "/api/auth/cli/authorize", api, body("http://127.0.0.1:4567/cb")), http.StatusForbidden, "session_required")
		for _, bad := range []string{"https://127.0.0.1:4567/cb", "http://evil.example:4567/cb", "http://127.0.0.1/cb", "http://127.0.0.1.evil.example:80/cb"} {
			expectError(t, post(s, t, "/api/auth/cli/authorize", a.Token, body(bad)), http.StatusBadRequest, "invalid_redirect_uri")
		}
		for _, good := range []string{"http://127.0.0.1:4567/cb", "http://[::1]:4567/cb", "http://localhost:4567/cb"} {
			r := post(s, t, "/api/auth/cli/authorize", a.Token, body(good))
			if r.Status != http.StatusOK {
				t.Fatalf("authorize %s: %d %s", good, r.Status, r.Body)
			}
			u, err := url.Parse(r.Map(t)["redirectTo"].(string))
			if err != nil || u.Query().Get("state") != "st-123" || u.Query().Get("code") == "" || !strings.HasPrefix(u.String(), good) {
				t.Fatalf("redirectTo %v", u)
			}
			code := u.Query().Get("code")
			wrong := post(s, t, "/api/auth/cli/token", "", map[string]string{"code": code, "codeVerifier": "wrong-" + verifier, "redirectUri": good})
			if wrong.Status == http.StatusOK {
				t.Fatal("wrong verifier accepted")
			}
			r2 := post(s, t, "/api/auth/cli/authorize", a.Token, body(good))
			u2, _ := url.Parse(r2.Map(t)["redirectTo"].(string))
			tr := post(s, t, "/api/auth/cli/token", "", map[string]string{"code": u2.Query().Get("code"), "codeVerifier": verifier, "redirectUri": good})
			if tr.Status != http.StatusOK || !strings.HasPrefix(tr.Map(t)["token"].(string), "svc_") {
				t.Fatalf("exchange: %d %s", tr.Status, tr.Body)
			}
			replay := post(s, t, "/api/auth/cli/token", "", map[string]string{"code": u2.Query().Get("code"), "codeVerifier": verifier, "redirectUri": good})
			if replay.Status == http.StatusOK {
				t.Fatal("authorization code used twice")
			}
		}
	})
}
