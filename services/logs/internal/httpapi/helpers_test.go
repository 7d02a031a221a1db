package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/plans"
	"tori.dev/services/logs/internal/store"
)

var signingKey = []byte("test-signing-key")

// testNow is the service's clock in these tests; the gateway signature uses the real clock.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type env struct {
	db  *logstest.DB
	app *fiber.App
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := logstest.NewDB(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// No billing on the bus here: an account without a plan gets the default retention.
	source := plans.NewSource(db.Store, nil, time.Second, 1, quiet)
	app := httpapi.New(httpapi.Deps{
		Reader:     logs.NewReader(db.Store, db.Store, source, func() time.Time { return testNow }),
		SigningKey: signingKey,
		Identity:   health.NewIdentity("logs", "test"),
		Log:        quiet,
	})
	return &env{db: db, app: app}
}

// newApp records a live app of account and returns it.
func (e *env) newApp(t *testing.T, account, slug string) store.App {
	t.Helper()
	a := store.App{ID: uuid.NewString(), AccountID: account, Slug: slug}
	e.db.SaveApp(t, a)
	return a
}

type response struct {
	Status int
	Body   map[string]any
	Raw    string
}

// get sends a request signed by the gateway for account ("" signs an anonymous caller).
func (e *env) get(t *testing.T, account, slug string, params url.Values) response {
	t.Helper()
	target := "/api/apps/" + slug + "/logs"
	if len(params) > 0 {
		target += "?" + params.Encode()
	}
	req := httptest.NewRequest("GET", target, nil)
	caller := callerid.Caller{}
	if account != "" {
		caller = callerid.Caller{AccountID: account, UserID: "user-" + account, TokenKind: callerid.KindSession, TokenID: "tok"}
	}
	callerid.Sign(signingKey, req.Header.Set, caller, "GET", target, time.Now())
	return e.do(t, req)
}

func (e *env) do(t *testing.T, req *http.Request) response {
	t.Helper()
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{Status: res.StatusCode, Raw: string(b)}
	if err := json.Unmarshal(b, &r.Body); err != nil {
		t.Fatalf("body is not a JSON object: %q", b)
	}
	return r
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func entriesAt(appID string, ts time.Time, n int) []logs.Entry {
	out := make([]logs.Entry, n)
	for i := range out {
		out[i] = logs.Entry{AppID: appID, Stream: logs.StreamStdout, Timestamp: ts, Message: "line"}
	}
	return out
}
