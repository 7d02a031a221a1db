package httpapi_test

import (
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/services/logs/internal/drains"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

// drainEnv serves the drain routes; its receiver is the one test host the guard allows.
type drainEnv struct {
	*env
	receiver *httptest.Server
	got      chan *http.Request
}

func newDrainEnv(t *testing.T) *drainEnv {
	t.Helper()
	db := logstest.NewDB(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	got := make(chan *http.Request, 4)
	rcv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rcv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(rcv.Certificate())
	dv := drains.Deliverer{Guard: drains.Guard{TestHost: rcv.Listener.Addr().String(), TestCA: pool}}
	apps := usecase.NewAppFinder(db.Store, nil, quiet)
	svc := drains.NewService(db.Store, apps, usecase.DrainLimits{Store: db.Store, Copy: db.Store}, dv, time.Now)
	web := httpapi.New(httpapi.Deps{
		Reader: usecase.NewReader(db.Store, db.Store, nil, time.Now), Drains: svc,
		SigningKey: signingKey, Apps: apps, DB: db.Pool, Identity: health.NewIdentity("logs", "test"), Log: quiet,
	})
	return &drainEnv{env: &env{db: db, app: web}, receiver: rcv, got: got}
}

func (e *drainEnv) call(t *testing.T, account, method, path, body string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	caller := callerid.Caller{AccountID: account, UserID: "user-" + account, TokenKind: callerid.KindSession, TokenID: "tok"}
	callerid.Sign(signingKey, req.Header.Set, caller, method, req.Host, path, time.Now())
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := response{Status: res.StatusCode, Raw: string(b)}
	if len(b) > 0 && b[0] != '[' { // a list is read from Raw
		if err := json.Unmarshal(b, &r.Body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %q", method, path, b)
		}
	}
	return r
}

func TestDrainRoutes(t *testing.T) {
	e := newDrainEnv(t)
	team := "team-" + uuid.NewString()[:8]
	e.newApp(t, team, "shop")
	e.db.SavePlanVersion(t, logs.Plan{AccountID: team, Name: "nestling", RetentionDays: 1, Version: 1, Drains: 1})
	good := `{"url":"https://` + e.receiver.Listener.Addr().String() + `/in?token=abc"}`

	// Refusals in order: malformed 400, forbidden address 400, and only then the plan's 403.
	for _, c := range []struct {
		body, code string
		status     int
	}{
		{`{"url":"http://collector.example.com/"}`, "invalid_parameter", 400},
		{`{"url":"https://collector.example.com:99999/"}`, "invalid_parameter", 400},
		{`{}`, "invalid_parameter", 400},
		{`not json`, "invalid_parameter", 400},
		{`{"url":"https://127.0.0.1/in"}`, "drain_address_forbidden", 400},
		{`{"url":"https://10.0.0.8/in"}`, "drain_address_forbidden", 400},
		{`{"url":"syslog+tls://169.254.169.254:6514"}`, "drain_address_forbidden", 400},
		{`{"url":"https://localhost:8443/in"}`, "drain_address_forbidden", 400},
	} {
		if r := e.call(t, team, "POST", "/api/apps/shop/drains", c.body); r.Status != c.status || r.Body["code"] != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.body, r.Status, r.Raw, c.status, c.code)
		}
	}
	r := e.call(t, team, "POST", "/api/apps/shop/drains", good)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	id, secret := r.Body["id"].(string), r.Body["secret"].(string)
	if len(secret) != 64 || r.Body["url"] != "https://"+e.receiver.Listener.Addr().String()+"/in?token=***" ||
		r.Body["kind"] != "https" || r.Body["status"] != "active" || r.Body["dropped24h"] != 0.0 {
		t.Fatalf("created %s", r.Raw)
	}
	// The plan's one drain is used: a bad URL is still a 400, a forbidden one too, a good one 403.
	if r := e.call(t, team, "POST", "/api/apps/shop/drains", `{"url":"ftp://x"}`); r.Status != 400 {
		t.Errorf("malformed past the limit: %d %s", r.Status, r.Raw)
	}
	if r := e.call(t, team, "POST", "/api/apps/shop/drains", `{"url":"https://192.168.0.1/"}`); r.Body["code"] != "drain_address_forbidden" {
		t.Errorf("forbidden past the limit: %d %s", r.Status, r.Raw)
	}
	if r := e.call(t, team, "POST", "/api/apps/shop/drains", good); r.Status != 403 || r.Body["code"] != "drain_limit_reached" || r.Body["limit"] != 1.0 || r.Body["plan"] != "nestling" {
		t.Errorf("past the limit: %d %s", r.Status, r.Raw)
	}
	// The secret is never shown again.
	for _, path := range []string{"/api/apps/shop/drains", "/api/apps/shop/drains/" + id} {
		r := e.call(t, team, "GET", path, "")
		if r.Status != 200 || strings.Contains(r.Raw, secret) || strings.Contains(r.Raw, "abc") || strings.Contains(r.Raw, `"secret"`) {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Raw)
		}
	}
	if r := e.call(t, team, "GET", "/api/apps/shop/drains", ""); !strings.HasPrefix(r.Raw, `[{"id":"`+id+`"`) || strings.Count(r.Raw, `"id"`) != 1 {
		t.Errorf("list %s", r.Raw)
	}
	// The test sends one signed line now.
	r = e.call(t, team, "POST", "/api/apps/shop/drains/"+id+"/test", "")
	if r.Status != 200 || r.Body["delivered"] != true || r.Body["status"] != 200.0 {
		t.Fatalf("test: %d %s", r.Status, r.Raw)
	}
	select {
	case req := <-e.got:
		if req.Header.Get("Tori-Drain-Id") != id || !strings.HasPrefix(req.Header.Get(drains.SignatureHeader), "sha256=") {
			t.Errorf("test request headers %v", req.Header)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the test line did not arrive")
	}

	// Another team: 404 for its app and for the drain through another app.
	other := "team-" + uuid.NewString()[:8]
	e.newApp(t, other, "blog")
	for _, c := range []struct{ account, method, path string }{
		{other, "GET", "/api/apps/shop/drains"},
		{other, "GET", "/api/apps/shop/drains/" + id},
		{other, "DELETE", "/api/apps/shop/drains/" + id},
		{other, "POST", "/api/apps/shop/drains/" + id + "/test"},
		{other, "GET", "/api/apps/blog/drains/" + id},
		{team, "GET", "/api/apps/shop/drains/" + uuid.NewString()},
		{team, "GET", "/api/apps/shop/drains/not-a-uuid"},
	} {
		if r := e.call(t, c.account, c.method, c.path, ""); r.Status != 404 {
			t.Errorf("%s %s as %s: %d %s", c.method, c.path, c.account, r.Status, r.Raw)
		}
	}
	if r := e.call(t, other, "POST", "/api/apps/shop/drains", good); r.Status != 404 {
		t.Errorf("create on another team's app: %d %s", r.Status, r.Raw)
	}

	if r := e.call(t, team, "DELETE", "/api/apps/shop/drains/"+id, ""); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	if r := e.call(t, team, "GET", "/api/apps/shop/drains/"+id, ""); r.Status != 404 {
		t.Fatalf("deleted drain: %d %s", r.Status, r.Raw)
	}
	if r := e.call(t, team, "POST", "/api/apps/shop/drains", `{"url":"syslog+tls://`+e.receiver.Listener.Addr().String()+`"}`); r.Status != 201 || r.Body["kind"] != "syslog" || r.Body["secret"] != nil {
		t.Fatalf("syslog drain after the delete: %d %s", r.Status, r.Raw)
	}
}

// Every drain route is in the fragment with its 403 (drains are an admin's), and the Drain
// schemas list exactly what the routes answer.
func TestOpenAPIFragmentDescribesTheDrainRoutes(t *testing.T) {
	raw, err := os.ReadFile("../../openapi-fragment.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc fragment
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	e := newDrainEnv(t)
	param := regexp.MustCompile(`:(\w+)`)
	served := 0
	for _, r := range e.app.GetRoutes(true) {
		if !strings.Contains(r.Path, "/drains") || r.Method == "HEAD" {
			continue
		}
		served++
		p := param.ReplaceAllString(r.Path, "{$1}")
		op, ok := doc.Paths[p][strings.ToLower(r.Method)]
		if !ok || !strings.Contains(string(op), `"403"`) || !strings.Contains(string(op), `"404"`) {
			t.Errorf("%s %s: missing from the fragment, or without its 403/404", r.Method, p)
		}
	}
	if served != 5 {
		t.Errorf("%d drain routes served, want 5", served)
	}
	team := "team-" + uuid.NewString()[:8]
	e.newApp(t, team, "shop")
	e.db.SavePlanVersion(t, logs.Plan{AccountID: team, Name: "flock", RetentionDays: 30, Version: 1, Drains: 10})
	created := e.call(t, team, "POST", "/api/apps/shop/drains", `{"url":"https://`+e.receiver.Listener.Addr().String()+`/"}`)
	if created.Status != 201 {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	sameKeys(t, "DrainCreated", keys(doc.Components.Schemas["DrainCreated"].Properties), created.Body)
	one := e.call(t, team, "GET", "/api/apps/shop/drains/"+created.Body["id"].(string), "")
	sameKeys(t, "Drain", doc.Components.Schemas["Drain"].Required, one.Body)
	sameKeys(t, "Drain", keys(doc.Components.Schemas["Drain"].Properties), one.Body)
}
