package httpapi_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

const bucketHeader = "X-Tori-Count-Bucket"

func (h *harness) startDevice(body any) map[string]any {
	h.t.Helper()
	r := h.do("POST", "/api/auth/cli/device", body, anonymous)
	h.expect(r, 200, "")
	return r.json(h.t)
}

func (h *harness) poll(deviceCode string) response {
	h.t.Helper()
	return h.do("POST", "/api/auth/cli/token", map[string]string{"deviceCode": deviceCode}, anonymous)
}

func TestDeviceFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, session := h.signIn("ada@example.com")
	apiTok := h.do("POST", "/api/tokens", map[string]string{"name": "ci"}, session).json(t)["token"].(string)
	api := h.callerOf(apiTok)

	d := h.startDevice(map[string]string{"clientName": "ada's laptop"})
	if got := keys(d); got != "deviceCode,expiresIn,interval,userCode,verificationUri,verificationUriComplete" {
		t.Fatalf("device shape %s", got)
	}
	userCode := d["userCode"].(string)
	if !regexp.MustCompile(`^[A-Z2-9]{4}-[A-Z2-9]{4}$`).MatchString(userCode) {
		t.Fatalf("userCode %q", userCode)
	}
	if d["verificationUri"] != consoleURL+"/device" || d["verificationUriComplete"] != consoleURL+"/device?user_code="+userCode ||
		d["expiresIn"] != float64(600) || d["interval"] != float64(5) {
		t.Fatalf("device answer %v", d)
	}
	deviceCode := d["deviceCode"].(string)

	// Before approval.
	r := h.poll(deviceCode)
	h.expect(r, 400, "authorization_pending")
	if r.header.Get(bucketHeader) != "" {
		t.Fatal("a known device code must not count against the address")
	}
	// Polled faster than the interval: slow_down, with the wait in body and header.
	r = h.poll(deviceCode)
	m := h.expect(r, 429, "slow_down")
	if m["retryAfter"] != float64(5) || m["retryAfterSeconds"] != float64(5) || r.header.Get("Retry-After") != "5" {
		t.Fatalf("slow_down %v, Retry-After %q", m, r.header.Get("Retry-After"))
	}
	if r.header.Get(bucketHeader) != "" {
		t.Fatal("slow_down of a known code must not count against the address")
	}
	h.clock.Advance(2 * time.Second)
	m = h.expect(h.poll(deviceCode), 429, "slow_down")
	if m["retryAfter"] != float64(3) {
		t.Fatalf("retryAfter %v, want the 3 seconds left of the interval", m["retryAfter"])
	}
	// Waiting out the interval is enough: the refused polls did not restart it.
	h.clock.Advance(3 * time.Second)
	h.expect(h.poll(deviceCode), 400, "authorization_pending")

	// Only a session approves.
	h.expect(h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": userCode}, api), 403, "session_required")
	h.expect(h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": "BCDF-GHJK"}, session), 400, "invalid_user_code")
	h.expect(h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": "nonsense"}, session), 400, "invalid_user_code")
	typed := strings.ToLower(strings.ReplaceAll(userCode, "-", ""))
	r = h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": typed}, session)
	h.expect(r, 200, "")
	if string(r.body) != `{"ok":true}` {
		t.Fatalf("approve body %s", r.body)
	}

	// The token, once.
	h.clock.Advance(5 * time.Second)
	r = h.poll(deviceCode)
	h.expect(r, 200, "")
	tok := r.json(t)
	if got := keys(tok); got != "token,tokenId" || !strings.HasPrefix(tok["token"].(string), "svc_") {
		t.Fatalf("token answer %v", tok)
	}
	minted := h.callerOf(tok["token"].(string))
	if minted.AccountID != session.AccountID || minted.TokenKind != "api" || minted.TokenID != tok["tokenId"] {
		t.Fatalf("minted token acts for %+v", minted)
	}
	list := h.do("GET", "/api/tokens", nil, session).list(t)
	if len(list) != 2 || list[1]["name"] != "ada's laptop" {
		t.Fatalf("the minted token is not listed under the client's name: %v", list)
	}
	h.clock.Advance(5 * time.Second)
	h.expect(h.poll(deviceCode), 400, "access_denied")
	// The user code is spent too.
	h.expect(h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": userCode}, session), 400, "invalid_user_code")
}

func TestDeviceTokenUnknownCodeCountsAgainstTheAddress(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, body := range []string{`{"deviceCode":"nope"}`, `{"code":"nope","codeVerifier":"x","redirectUri":"http://127.0.0.1:1/"}`, `{}`, `{"deviceCode":`, `{"deviceCode":"a","code":"b"}`} {
		r := h.raw("POST", "/api/auth/cli/token", []byte(body), anonymous)
		if r.status != 400 || r.header.Get(bucketHeader) != "1" {
			t.Errorf("%s: status %d bucket %q, want 400 and 1", body, r.status, r.header.Get(bucketHeader))
		}
	}
	h.expect(h.raw("POST", "/api/auth/cli/token", []byte(`{"deviceCode":"nope"}`), anonymous), 400, "invalid_grant")
	h.expect(h.raw("POST", "/api/auth/cli/token", []byte(`{}`), anonymous), 400, "invalid_request")
	h.expect(h.raw("POST", "/api/auth/cli/token", []byte(`{"x":`), anonymous), 400, "invalid_body")
}

func TestDeviceExpiryAndDenial(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, session := h.signIn("ada@example.com")

	// Without clientName (and without a body) it works too.
	late := h.startDevice(nil)
	h.clock.Advance(10 * time.Minute)
	h.expect(h.poll(late["deviceCode"].(string)), 400, "expired_token")
	h.expect(h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": late["userCode"].(string)}, session), 400, "expired_token")

	// Approved, but the device came back too late.
	slow := h.startDevice(map[string]string{})
	h.expect(h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": slow["userCode"].(string)}, session), 200, "")
	h.clock.Advance(10 * time.Minute)
	h.expect(h.poll(slow["deviceCode"].(string)), 400, "expired_token")

	denied := h.startDevice(nil)
	h.expect(h.do("POST", "/api/auth/cli/deny", map[string]string{"userCode": denied["userCode"].(string)}, session), 200, "")
	h.expect(h.poll(denied["deviceCode"].(string)), 400, "access_denied")
	h.expect(h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": denied["userCode"].(string)}, session), 400, "invalid_user_code")

	// Neither approve nor deny accepts an API token.
	apiTok := h.do("POST", "/api/tokens", map[string]string{"name": "ci"}, session).json(t)["token"].(string)
	other := h.startDevice(nil)
	h.expect(h.do("POST", "/api/auth/cli/deny", map[string]string{"userCode": other["userCode"].(string)}, h.callerOf(apiTok)), 403, "session_required")
}
