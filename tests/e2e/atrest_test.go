package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/tests/e2e/harness"
)

// keyed is a POST with an Idempotency-Key.
func keyed(s *harness.Stack, t *testing.T, path, token, key string, body any) *harness.Response {
	t.Helper()
	return s.Do(t, harness.Request{Method: http.MethodPost, Path: path, Token: token, Body: body, Header: map[string]string{"Idempotency-Key": key}})
}

// TestNoMintedSecretAtRest mints every kind of credential with an Idempotency-Key, repeats
// each request, sets environment values, then reads every row of every table of the stack's
// database: no token, sign-in code, device code or PKCE code is found there as it was shown
// (services keep hashes), and the idempotency table holds no environment value either. The
// repeat of a minting request answers 409 without the secret; the same key under an API token
// of the same account is a request of its own (403 session_required), never the session's
// answer.
func TestNoMintedSecretAtRest(t *testing.T) {
	s := defaultStack(t)
	var secrets []string
	noSecret := func(r *harness.Response, secret string) {
		t.Helper()
		if strings.Contains(string(r.Body), secret) {
			t.Fatalf("a repeat carried the secret: %d %s", r.Status, r.Body)
		}
	}

	email := harness.Email("at-rest")
	code := s.MagicCode(t, email)
	secrets = append(secrets, code)
	verify := keyed(s, t, "/api/auth/magic-link/verify", "", "verify-1", map[string]string{"token": code})
	if verify.Status != http.StatusOK {
		t.Fatalf("verify: %d %s", verify.Status, verify.Body)
	}
	session := verify.Map(t)["token"].(string)
	secrets = append(secrets, session)
	again := keyed(s, t, "/api/auth/magic-link/verify", "", "verify-1", map[string]string{"token": code})
	expectError(t, again, http.StatusConflict, "idempotency_key_reused")
	noSecret(again, session)

	// The path: a session mints under K1; an API token of the same account sends the
	// same request with K1.
	minted := keyed(s, t, "/api/tokens", session, "K1", map[string]string{"name": "ci"})
	if minted.Status != http.StatusCreated {
		t.Fatalf("mint: %d %s", minted.Status, minted.Body)
	}
	api := minted.Map(t)["token"].(string)
	secrets = append(secrets, api)
	again = keyed(s, t, "/api/tokens", session, "K1", map[string]string{"name": "ci"})
	expectError(t, again, http.StatusConflict, "idempotency_key_reused")
	noSecret(again, api)
	asAPI := keyed(s, t, "/api/tokens", api, "K1", map[string]string{"name": "ci"})
	expectError(t, asAPI, http.StatusForbidden, "session_required")
	noSecret(asAPI, api)
	if asAPI.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("the API token was answered the session's request")
	}

	dev := post(s, t, "/api/auth/cli/device", "", map[string]string{}).Map(t)
	secrets = append(secrets, dev["deviceCode"].(string))
	post(s, t, "/api/auth/cli/approve", session, map[string]string{"userCode": dev["userCode"].(string)})
	time.Sleep(time.Duration(dev["interval"].(float64)) * time.Second)
	body := map[string]string{"deviceCode": dev["deviceCode"].(string)}
	devTok := keyed(s, t, "/api/auth/cli/token", "", "device-1", body)
	if devTok.Status != http.StatusOK {
		t.Fatalf("device token: %d %s", devTok.Status, devTok.Body)
	}
	secrets = append(secrets, devTok.Map(t)["token"].(string))
	again = keyed(s, t, "/api/auth/cli/token", "", "device-1", body)
	expectError(t, again, http.StatusConflict, "idempotency_key_reused")
	noSecret(again, secrets[len(secrets)-1])

	verifier := "a-verifier-" + strings.Repeat("w", 43)
	authBody := map[string]string{"redirectUri": "http://127.0.0.1:9999/cb", "state": "s", "codeChallenge": s256(verifier), "codeChallengeMethod": "S256"}
	authz := keyed(s, t, "/api/auth/cli/authorize", session, "authorize-1", authBody)
	if authz.Status != http.StatusOK {
		t.Fatalf("authorize: %d %s", authz.Status, authz.Body)
	}
	u, _ := url.Parse(authz.Map(t)["redirectTo"].(string))
	pkceCode := u.Query().Get("code")
	secrets = append(secrets, pkceCode)
	noSecret(keyed(s, t, "/api/auth/cli/authorize", session, "authorize-1", authBody), pkceCode)
	pk := keyed(s, t, "/api/auth/cli/token", "", "pkce-1", map[string]string{"code": pkceCode, "codeVerifier": verifier, "redirectUri": "http://127.0.0.1:9999/cb"})
	if pk.Status != http.StatusOK {
		t.Fatalf("pkce token: %d %s", pk.Status, pk.Body)
	}
	secrets = append(secrets, pk.Map(t)["token"].(string))

	// Environment values, and keyed requests of other routes whose answers are kept.
	app := keyed(s, t, "/api/apps", session, "app-1", map[string]string{})
	if app.Status != http.StatusCreated {
		t.Fatalf("app: %d %s", app.Status, app.Body)
	}
	slug := app.Map(t)["slug"].(string)
	envValue := "env-value-" + harness.Hex(12)
	if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: session, Body: map[string]string{"key": "SECRET_THING", "value": envValue}}); r.Status/100 != 2 {
		t.Fatalf("env: %d %s", r.Status, r.Body)
	}
	keyed(s, t, "/api/apps/"+slug+"/domains", session, "domain-1", map[string]string{"hostname": "www." + harness.Hex(4) + ".example.test"})
	keyed(s, t, "/api/billing/portal", session, "portal-1", nil)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.Env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tables := allTables(ctx, t, conn)
	var idem string
	rowsSeen := 0
	for _, table := range tables {
		text := tableText(ctx, t, conn, table)
		rowsSeen += strings.Count(text, "\n")
		for _, secret := range secrets {
			if strings.Contains(text, secret) || strings.Contains(text, hex.EncodeToString([]byte(secret))) {
				t.Errorf("table %s holds a minted secret (%s…)", table, secret[:6])
			}
		}
		if strings.HasSuffix(table, ".idempotency_keys") {
			idem = text
			if strings.Contains(text, envValue) || strings.Contains(text, hex.EncodeToString([]byte(envValue))) {
				t.Errorf("the idempotency table holds an environment value")
			}
		}
	}
	// The scan proves something only if it read the rows the requests above wrote.
	if !strings.Contains(idem, hex.EncodeToString([]byte(slug))) {
		t.Fatalf("the idempotency table (%d bytes) does not hold the kept answer of POST /api/apps; %d tables, %d rows read", len(idem), len(tables), rowsSeen)
	}
	t.Logf("scanned %d tables, %d rows, for %d secrets", len(tables), rowsSeen, len(secrets))
}

// allTables lists every ordinary table outside the system schemas, schema-qualified.
func allTables(ctx context.Context, t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 5 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	return tables
}

// tableText is every row of table as Postgres's text form, one a line (bytea as hex).
func tableText(ctx context.Context, t *testing.T, conn *pgx.Conn, table string) string {
	t.Helper()
	rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT t::text FROM %s t`, table))
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	return strings.Join(lines, "\n") + "\n"
}
