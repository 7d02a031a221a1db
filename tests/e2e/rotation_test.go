package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/tests/e2e/harness"
)

// urlAppPy is a source app that says which DATABASE_URL it was started with.
const urlAppPy = `
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        b = json.dumps({"url": os.environ.get("DATABASE_URL", "")}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(b)
HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
`

// tryDatabase connects with a DATABASE_URL (the pooler listens where the sandbox reaches it)
// and runs sql.
func tryDatabase(raw, sql string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	q := u.Query()
	q.Set("default_query_exec_mode", "simple_protocol")
	q.Set("connect_timeout", "5")
	u.RawQuery = q.Encode()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// Rotating the database's password through the gateway: 202 with the record; DATABASE_URL is
// rewritten with a new password and login, keeping the query parameter the customer added;
// the running revision's old password works on until the next deploy is live, and is then
// refused while the new one works on the same data.
func TestDatabaseCredentialRotation(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "db-rotate")
	other := s.NewAccount(t, "db-rotate-other")
	slug := createApp(t, s, a.Token, "service")
	rotate := "/api/apps/" + slug + "/database/credentials/rotate"
	expectError(t, post(s, t, rotate, a.Token, nil), http.StatusNotFound, "not found")
	if r := post(s, t, "/api/apps/"+slug+"/database", a.Token, nil); r.Status != http.StatusAccepted {
		t.Fatalf("create database: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 30*time.Second, "DATABASE_URL written", func() bool {
		_, ok := envValue(t, s, a.Token, slug, "DATABASE_URL")
		return ok
	})
	expectError(t, post(s, t, rotate, other.Token, nil), http.StatusNotFound, "not found")

	m, _ := json.Marshal(map[string]string{"start": "python3 server.py"})
	tarball := sourceTarball(t, map[string]string{"tori.json": string(m), "server.py": urlAppPy})
	deployedURL := func() string {
		t.Helper()
		r := deploySource(t, s, a.Token, slug, tarball, "")
		if r.Status != http.StatusCreated {
			t.Fatalf("deploy: %d %s", r.Status, r.Body)
		}
		waitStatus(t, s, a.Token, slug, r.Map(t)["id"].(string), "live")
		status, body := edgeGet(t, s, slug, "/")
		var out struct{ URL string }
		if status != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil || out.URL == "" {
			t.Fatalf("the app: %d %s", status, body)
		}
		return out.URL
	}

	// The customer adds a parameter of their own, and the next deploy runs with it.
	first := deployedURL()
	custom := first + "&application_name=rotation-e2e"
	if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token,
		Body: map[string]string{"key": "DATABASE_URL", "value": custom}}); r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("set DATABASE_URL: %d %s", r.Status, r.Body)
	}
	old := deployedURL()
	if old != custom {
		t.Fatal("the deploy does not run with the customer's DATABASE_URL")
	}
	if err := tryDatabase(old, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('before the rotation')"); err != nil {
		t.Fatalf("the first password: %v", err)
	}

	r := post(s, t, rotate, a.Token, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	body := r.Map(t)
	expectKeys(t, "database", body, "id", "appId", "createdAt", "message", "status")
	if body["status"] != "ready" || strings.Contains(string(r.Body), "postgres://") {
		t.Fatalf("rotate answered %s", r.Body)
	}
	// The apps service says so in its log (polling the API would spend the read budget).
	harness.Eventually(t, 30*time.Second, "DATABASE_URL rewritten", func() bool {
		b, err := os.ReadFile(s.LogPath("apps"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), `"msg":"database variable written"`) == 2
	})
	// Until the next deploy is live the running revision's password works on.
	if err := tryDatabase(old, "INSERT INTO notes VALUES ('after the rotation, old password')"); err != nil {
		t.Fatalf("the old password before the next deploy: %v", err)
	}

	fresh := deployedURL()
	o, _ := url.Parse(old)
	n, err := url.Parse(fresh)
	if err != nil {
		t.Fatal(err)
	}
	oldPw, _ := o.User.Password()
	newPw, _ := n.User.Password()
	if newPw == oldPw || n.User.Username() == o.User.Username() || n.Host != o.Host || n.Path != o.Path {
		t.Fatalf("after the rotation the URL is %s@%s%s (was %s@%s%s); want a new login and password on the same pooler and database",
			n.User.Username(), n.Host, n.Path, o.User.Username(), o.Host, o.Path)
	}
	if n.Query().Get("application_name") != "rotation-e2e" || n.Query().Get("sslmode") != "disable" {
		t.Fatalf("the rewritten URL's parameters: %v", n.Query())
	}
	harness.Eventually(t, 30*time.Second, "the old password refused once the next deploy is live", func() bool {
		return tryDatabase(old, "SELECT 1") != nil
	})
	if err := tryDatabase(fresh, "INSERT INTO notes VALUES ('new password')"); err != nil {
		t.Fatalf("the new password: %v", err)
	}
	var count int
	ctx := context.Background()
	fq := n.Query()
	fq.Set("default_query_exec_mode", "simple_protocol")
	n.RawQuery = fq.Encode()
	conn, err := pgx.Connect(ctx, n.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM notes").Scan(&count); err != nil || count != 3 {
		t.Fatalf("the new login sees %d notes (%v), want 3", count, err)
	}
}
