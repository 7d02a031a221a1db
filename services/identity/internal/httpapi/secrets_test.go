package httpapi_test

import (
	"context"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/logging"
	"tori.dev/services/identity/internal/mail"
)

// fullSignIn runs every way of getting a credential and returns every secret handed out.
func fullSignIn(t *testing.T, h *harness) []string {
	t.Helper()
	code := h.magicCode("ada@example.com")
	r := h.do("POST", "/api/auth/magic-link/verify", map[string]string{"token": code}, anonymous)
	h.expect(r, 200, "")
	session := r.json(t)["token"].(string)
	caller := h.callerOf(session)

	d := h.startDevice(map[string]string{"clientName": "laptop"})
	h.expect(h.do("POST", "/api/auth/cli/approve", map[string]string{"userCode": d["userCode"].(string)}, caller), 200, "")
	r = h.poll(d["deviceCode"].(string))
	h.expect(r, 200, "")
	deviceToken := r.json(t)["token"].(string)
	h.callerOf(deviceToken)

	authCode := h.codeFrom(caller)
	r = h.exchange(authCode, verifier, redirect)
	h.expect(r, 200, "")
	loopbackToken := r.json(t)["token"].(string)

	consoleToken := h.do("POST", "/api/tokens", map[string]string{"name": "ci"}, caller).json(t)["token"].(string)
	h.callerOf(consoleToken)

	// An invitation's code is a secret too.
	h.expect(h.do("POST", "/api/teams", map[string]string{"name": "Acme", "slug": "acme"}, caller), 201, "")
	invitation := h.invite(h.callerOf(session), "acme", "bob@example.com", "viewer")
	h.expect(h.do("POST", "/api/auth/logout", nil, caller), 204, "")

	return []string{code, url.QueryEscape(code), session, d["deviceCode"].(string), d["userCode"].(string),
		strings.ReplaceAll(d["userCode"].(string), "-", ""), deviceToken, authCode, loopbackToken, consoleToken,
		invitation, url.QueryEscape(invitation)}
}

// Every secret the service hands out is kept only as a hash: no table, the outbox included,
// holds one in any form.
func TestSecretsAreStoredOnlyAsHashes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	secrets := fullSignIn(t, h)
	ctx := context.Background()

	rows, _ := h.pool.Query(ctx, `SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()`)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 8 {
		t.Fatalf("tables %v %v", tables, err)
	}
	var dump strings.Builder
	for _, tbl := range tables {
		rows, _ := h.pool.Query(ctx, `SELECT t::text FROM `+pgx.Identifier{tbl}.Sanitize()+` t`)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		dump.WriteString(strings.Join(lines, "\n"))
	}
	text := dump.String()
	if !strings.Contains(text, "ada@example.com") {
		t.Fatal("the dump holds no data: the scan would prove nothing")
	}
	for _, s := range secrets {
		if strings.Contains(text, s) || strings.Contains(text, hex.EncodeToString([]byte(s))) {
			t.Errorf("a secret (%.6s…) is stored in plain text", s)
		}
	}
}

// No log line of a full sign-in holds a code, a token, the link or the mail's text.
func TestLogsNeverHoldSecrets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := filepath.Join(t.TempDir(), "mail")
	h.mailer.next = mail.FileSender{Dir: dir, From: "Tori <no-reply@tori.localhost>", Log: logging.New("identity", h.logs), Now: time.Now}

	secrets := fullSignIn(t, h)
	// Refusals log too: a bad code, an unknown token, a failed mail.
	h.do("POST", "/api/auth/magic-link/verify", map[string]string{"token": secrets[0]}, anonymous)
	h.do("POST", "/internal/introspect", map[string]string{"token": secrets[2]}, anonymous)
	h.mailer.refuse()
	h.do("POST", "/api/auth/magic-link", map[string]string{"email": "ada@example.com"}, anonymous)

	logs := h.logs.String()
	if !strings.Contains(logs, `"route":"/api/auth/magic-link/verify"`) || !strings.Contains(logs, dir) {
		t.Fatalf("the logs were not captured, or do not say where the mail went:\n%s", logs)
	}
	forbidden := append(secrets, "auth/verify?token", "invitations/accept?token", "Open this link", "ada@example.com",
		"bob@example.com", consoleURL+"/auth", consoleURL+"/invitations")
	for _, s := range forbidden {
		if strings.Contains(logs, s) {
			t.Errorf("a log line holds %.12q…", s)
		}
	}
}
