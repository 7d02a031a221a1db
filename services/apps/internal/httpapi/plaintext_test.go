package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/google/uuid"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/busapi"
	appuc "tori.dev/services/apps/internal/usecase"
)

// Not parallel: it installs the process's tracer provider to see every span.
func TestPlaintextNeverStoredLoggedTracedOrReturned(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	t.Setenv("LOG_LEVEL", "debug")

	s := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	acct := apptest.NewAccount()
	s.SetPlan(acct, "songbird", 1)
	secret := func() string {
		b := make([]byte, 12)
		rand.Read(b)
		return "plaintext-" + hex.EncodeToString(b)
	}
	secrets := []string{secret(), secret(), secret(), secret()}
	var responses []string
	do := func(method, path string, body any) apptest.Response {
		r := s.Do(acct, method, path, body)
		responses = append(responses, string(r.Body))
		return r
	}

	app := do(http.MethodPost, "/api/apps", map[string]any{"name": "vault-of-secrets", "kind": "service"}).Map(t)
	do(http.MethodPost, "/api/apps", map[string]any{"name": "static-secrets"})
	do(http.MethodPut, "/api/apps/vault-of-secrets/env", map[string]any{"key": "API_KEY", "value": secrets[0]})
	do(http.MethodPut, "/api/apps/vault-of-secrets/env", map[string]any{"key": "API_KEY", "value": secrets[1]}) // update
	do(http.MethodPut, "/api/apps/vault-of-secrets/env", map[string]any{"key": "DB_PASSWORD", "value": secrets[2]})
	do(http.MethodPut, "/api/apps/static-secrets/env", map[string]any{"key": "STATIC", "value": secrets[3]})
	// Refused writes must not echo the value either.
	do(http.MethodPut, "/api/apps/vault-of-secrets/env", map[string]any{"key": "bad-key", "value": secrets[0]})
	do(http.MethodPut, "/api/apps/vault-of-secrets/env", map[string]any{"key": "TOO_BIG", "value": secrets[0] + strings.Repeat("x", 40<<10)})
	do(http.MethodPut, "/api/apps/nobody/env", map[string]any{"key": "NOPE", "value": secrets[0]})
	for _, path := range []string{"/api/apps", "/api/apps/vault-of-secrets", "/api/apps/vault-of-secrets/env", "/api/apps/static-secrets/env", "/api/apps/vault-of-secrets/domains"} {
		do(http.MethodGet, path, nil)
	}
	do(http.MethodPost, "/api/apps/static-secrets/domains", map[string]any{"hostname": "secrets.example.com"})

	// A deploy's snapshot through the responders, as the bus would call them.
	deployID := uuid.NewString()
	snapReply, err := busapi.EnvSnapshot(s.Services.Env)(ctx, delivery(t, &appsv1.EnvSnapshotRequest{AppId: app["id"].(string), DeployId: deployID}))
	if err != nil {
		t.Fatal(err)
	}
	snap := snapReply.(*appsv1.EnvSnapshotReply)
	if snap.Count != 2 {
		t.Fatalf("snapshot of %d variables, want 2", snap.Count)
	}
	s.Hosting.Host("local", app["id"].(string), deployID, deployID)
	asZone := delivery(t, &appsv1.EnvOpenRequest{AppId: app["id"].(string), DeployId: deployID, Sealed: snap.Sealed, KeyId: snap.KeyId})
	asZone.Publisher = bus.ZonePrincipal("local")
	openReply, err := busapi.EnvOpen(s.Services.Env)(ctx, asZone)
	if err != nil {
		t.Fatal(err)
	}
	// The one place plaintext may appear: the request/reply answer to the zone.
	if vars := openReply.(*appsv1.EnvOpenReply).Vars; vars["API_KEY"] != secrets[1] || vars["DB_PASSWORD"] != secrets[2] || len(vars) != 2 {
		t.Fatalf("opened snapshot %v", vars)
	}
	snapBytes, _ := proto.Marshal(snap)
	if _, err := appuc.RotateKeys(ctx, s.Keyring, s.Store); err != nil {
		t.Fatal(err)
	}
	do(http.MethodGet, "/api/apps/vault-of-secrets/env", nil)

	assertAbsent := func(where, text string) {
		t.Helper()
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("plaintext found in %s", where)
			}
		}
	}
	scanDatabase(t, s.AdminURL, secrets)
	for i, r := range responses {
		assertAbsent(fmt.Sprintf("response %d", i), r)
	}
	assertAbsent("the sealed snapshot", string(snapBytes))
	logs := s.Logs.String()
	if !strings.Contains(logs, `"route":"/api/apps/:slug/env"`) {
		t.Fatalf("the log capture saw no env request: %.500s", logs)
	}
	assertAbsent("the log", logs)
	spans := exp.GetSpans()
	if len(spans) == 0 {
		t.Fatal("no spans recorded")
	}
	for _, sp := range spans {
		assertAbsent("a span", fmt.Sprintf("%s %v %v %v", sp.Name, sp.Attributes, sp.Events, sp.Status))
	}

	// Deleting the app drops its ciphertexts too.
	do(http.MethodDelete, "/api/apps/vault-of-secrets", nil)
	scanDatabase(t, s.AdminURL, secrets)
	var left int
	s.Pool.QueryRow(ctx, `SELECT count(*) FROM env_vars WHERE app_id = $1`, app["id"]).Scan(&left)
	if left != 0 {
		t.Fatalf("%d variables of a deleted app remain", left)
	}
}

// scanDatabase fails the test when any plaintext is in the apps schema.
func scanDatabase(t *testing.T, adminURL string, secrets []string) {
	t.Helper()
	for _, f := range findInDatabase(t, adminURL, secrets) {
		t.Errorf("plaintext stored in %s", f)
	}
}

// The scan itself is checked: a canary planted in a text column and in the outbox's bytea
// body must be found, or a passing scan would prove nothing.
func TestDatabaseScanFindsPlantedPlaintext(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	canary := "canary-" + apptest.NewAccount()
	if _, err := s.Pool.Exec(ctx, `INSERT INTO accounts (account_id) VALUES ($1)`, canary); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool.Exec(ctx, `INSERT INTO outbox (id, routing_key, type, body) VALUES (gen_random_uuid(), 'x', 'x', $1)`, []byte("\x00\xff"+canary)); err != nil {
		t.Fatal(err)
	}
	found := findInDatabase(t, s.AdminURL, []string{canary})
	if len(found) != 2 {
		t.Fatalf("scan found %v, want accounts.account_id and outbox.body", found)
	}
}

// findInDatabase looks for each plaintext in every text, json and bytea column of every table
// in the apps schema (the outbox included) and names the columns holding one.
func findInDatabase(t *testing.T, adminURL string, secrets []string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns
WHERE table_schema = 'apps' AND data_type IN ('text', 'character varying', 'bytea', 'json', 'jsonb')`)
	if err != nil {
		t.Fatal(err)
	}
	type col struct{ table, column, typ string }
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (col, error) {
		var c col
		return c, r.Scan(&c.table, &c.column, &c.typ)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) < 10 {
		t.Fatalf("only %d columns to scan: %v", len(cols), cols)
	}
	seen := map[string]bool{}
	var found []string
	for _, c := range cols {
		seen[c.table] = true
		expr := pgx.Identifier{c.column}.Sanitize() + "::text"
		if c.typ == "bytea" {
			expr = pgx.Identifier{c.column}.Sanitize() // searched as bytes
		}
		for _, sec := range secrets {
			var n int
			var needle any = sec
			if c.typ == "bytea" {
				needle = []byte(sec)
			}
			q := fmt.Sprintf(`SELECT count(*) FROM apps.%s WHERE position($1 in %s) > 0`, pgx.Identifier{c.table}.Sanitize(), expr)
			if err := conn.QueryRow(ctx, q, needle).Scan(&n); err != nil {
				t.Fatalf("%s.%s: %v", c.table, c.column, err)
			}
			if n > 0 {
				found = append(found, c.table+"."+c.column)
			}
		}
	}
	for _, table := range []string{"env_vars", "outbox", "apps", "domains"} {
		if !seen[table] {
			t.Errorf("table %s was not scanned", table)
		}
	}
	return found
}

func delivery(t *testing.T, m proto.Message) bus.Delivery {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return bus.Delivery{ID: "test", Body: b, Attempt: 1}
}
