package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// TestNoSecretInLogs runs every sign-in path, then reads every line every service wrote.
func TestNoSecretInLogs(t *testing.T) {
	s := defaultStack(t)
	var secrets []string

	email := harness.Email("secretive")
	code := s.MagicCode(t, email)
	secrets = append(secrets, code)
	v := post(s, t, "/api/auth/magic-link/verify", "", map[string]string{"token": code}).Map(t)
	session := v["token"].(string)
	secrets = append(secrets, session)

	api := post(s, t, "/api/tokens", session, map[string]string{"name": "ci"}).Map(t)
	secrets = append(secrets, api["token"].(string))
	s.Get(t, "/api/account", api["token"].(string))

	dev := post(s, t, "/api/auth/cli/device", "", map[string]string{}).Map(t)
	secrets = append(secrets, dev["deviceCode"].(string))
	post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": dev["deviceCode"].(string)})
	post(s, t, "/api/auth/cli/approve", session, map[string]string{"userCode": dev["userCode"].(string)})
	time.Sleep(time.Duration(dev["interval"].(float64)) * time.Second)
	minted := post(s, t, "/api/auth/cli/token", "", map[string]string{"deviceCode": dev["deviceCode"].(string)})
	if minted.Status != http.StatusOK {
		t.Fatalf("device token: %d %s", minted.Status, minted.Body)
	}
	secrets = append(secrets, minted.Map(t)["token"].(string))

	verifier := "a-verifier-" + strings.Repeat("v", 43)
	auth := post(s, t, "/api/auth/cli/authorize", session, map[string]string{
		"redirectUri": "http://127.0.0.1:9999/cb", "state": "s", "codeChallenge": s256(verifier), "codeChallengeMethod": "S256",
	}).Map(t)
	u, _ := url.Parse(auth["redirectTo"].(string))
	secrets = append(secrets, u.Query().Get("code"), verifier)
	pk := post(s, t, "/api/auth/cli/token", "", map[string]string{"code": u.Query().Get("code"), "codeVerifier": verifier, "redirectUri": "http://127.0.0.1:9999/cb"})
	if pk.Status != http.StatusOK {
		t.Fatalf("pkce token: %d %s", pk.Status, pk.Body)
	}
	secrets = append(secrets, pk.Map(t)["token"].(string))
	post(s, t, "/api/auth/logout", session, nil)
	s.Get(t, "/api/account", session) // a revoked token in a failing request

	// Every service stopped gracefully has finished what it held and written its last line:
	// the scan reads all they will ever log, rather than what they logged by some moment.
	s.StopAll()
	logs := s.Logs()
	total := 0
	for name, text := range logs {
		total += len(text)
		for _, secret := range secrets {
			if secret == "" {
				t.Fatal("empty secret collected")
			}
			if strings.Contains(text, secret) {
				t.Errorf("%s's log contains a secret (%s…)", name, secret[:6])
			}
		}
	}
	if total == 0 || !strings.Contains(logs["gateway"], "/api/account") {
		t.Fatalf("the logs hold no access lines; the scan proves nothing")
	}
}
