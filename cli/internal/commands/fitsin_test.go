package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// fakeAPI answers the few routes these tests use, for a service app "svc" (variables
// API_KEY and DEBUG, a ready database) and a static app "site" (one hostname), and records
// every request it gets.
type fakeAPI struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+string(body)))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /api/apps":
			fmt.Fprint(w, `[{"slug":"svc","kind":"service"},{"slug":"site","kind":"static"},{"slug":"shop","kind":"static"}]`)
		case "GET /api/apps/svc":
			fmt.Fprint(w, `{"slug":"svc","kind":"service","status":"running","region":"eu","zone":"eu-1","url":"https://svc.apps.localhost","currentDeployId":"d9"}`)
		case "GET /api/apps/site":
			fmt.Fprint(w, `{"slug":"site","kind":"static","status":"running","region":"us","zone":"us-1","url":"https://site.apps.localhost","currentDeployId":null}`)
		case "GET /api/apps/svc/deploys/d9":
			fmt.Fprint(w, `{"id":"d9","kind":"source","status":"live","createdAt":"2026-11-26T10:00:00.000Z"}`)
		case "GET /api/apps/svc/database":
			fmt.Fprint(w, `{"id":"db1","status":"ready","message":null}`)
		case "GET /api/apps/site/domains":
			fmt.Fprint(w, `[{"hostname":"www.example.com","status":"active","certificate":{"status":"issued","expiresAt":"2027-02-25T12:00:00.000Z","lastError":null}},`+
				`{"hostname":"example.com","status":"pending","certificate":{"status":"failed","expiresAt":null,"lastError":"urn:ietf:params:acme:error:connection: refused"}}]`)
		case "GET /api/apps/svc/env":
			fmt.Fprint(w, `[{"key":"API_KEY","value":"s3c********"},{"key":"DEBUG","value":"********"}]`)
		case "PATCH /api/apps/svc/env":
			if strings.Contains(string(body), "bad") {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"error":"invalid_env_value","code":"invalid_env_value","message":"value must be a string"}`)
				return
			}
			fmt.Fprint(w, `[{"key":"A","value":"********"},{"key":"B","value":"********"}]`)
		case "GET /api/apps/svc/deploys/nope", "GET /api/apps/gone", "GET /api/apps/gone/env":
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":"not found"}`)
		case "GET /api/apps/svc/domains":
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"unauthorized"}`)
		default:
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":"internal"}`)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

func TestExitCodes(t *testing.T) {
	api := newFakeAPI(t)
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"success", []string{"apps", "list"}, ExitOK},
		{"help", []string{"apps", "--help"}, ExitOK},
		{"a group alone shows its help", []string{"env"}, ExitOK},
		{"the API refuses", []string{"apps", "show", "gone"}, ExitFailure},
		{"the API fails", []string{"billing"}, ExitFailure},
		{"unknown command", []string{"deplyo"}, ExitUsage},
		{"unknown subcommand", []string{"env", "bogus"}, ExitUsage},
		{"unknown flag", []string{"apps", "list", "--bogus"}, ExitUsage},
		{"-a where it does not apply", []string{"whoami", "-a", "svc"}, ExitUsage},
		{"too many arguments", []string{"apps", "show", "a", "b"}, ExitUsage},
		{"missing argument", []string{"domains", "add", "-a", "site"}, ExitUsage},
		{"a bad --since", []string{"logs", "-a", "svc", "--since", "yesterday"}, ExitUsage},
		{"a bad assignment", []string{"env", "set", "lower=1", "-a", "svc"}, ExitUsage},
		{"a bad flag value", []string{"deploys", "list", "-a", "svc", "--limit", "many"}, ExitUsage},
		{"no app anywhere", []string{"status"}, ExitUsage},
	}
	wd, _ := os.Getwd()
	os.Chdir(t.TempDir()) // no tori.json
	defer os.Chdir(wd)
	for _, tc := range cases {
		code, _, stderr := run(t, api.URL, "", tc.args...)
		if code != tc.want {
			t.Errorf("%s (tori %s): exit %d, want %d; stderr %q", tc.name, strings.Join(tc.args, " "), code, tc.want, stderr)
		}
	}
	// A usage error sends nothing.
	before := len(api.sent())
	run(t, api.URL, "", "env", "set", "lower=1", "-a", "svc")
	if len(api.sent()) != before {
		t.Fatalf("a usage error reached the API: %v", api.sent()[before:])
	}
}

// Ctrl-C cancels the run's context: whatever was waiting stops and tori exits 130.
func TestInterruptExits130(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	code, _, stderr := runWith(t, ctx, "http://"+ln.Addr().String(), "", nil, "apps", "list")
	if code != ExitInterrupted || !strings.Contains(stderr, "Interrupted") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}

// A request that sees no answer fails with the request's URL once the timeout passes (the
// binary's test in cmd/tori does the same at the real 30 s).
func TestNoAnswerExitsOneNamingTheURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	base := "http://" + ln.Addr().String()
	code, _, stderr := run(t, base, "", "apps", "list") // run's timeout is 2 s
	if code != ExitFailure || !strings.Contains(stderr, "GET "+base+"/api/apps") || !strings.Contains(stderr, "no answer") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}

// Failures name the app, the request, and what to do next.
func TestErrorsNameTheAppTheURLAndWhatToDo(t *testing.T) {
	api := newFakeAPI(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"apps", "show", "gone"}, `app "gone" not found (GET ` + api.URL + `/api/apps/gone): check the name with "tori apps list"`},
		{[]string{"env", "list", "-a", "gone"}, `app "gone" not found (GET ` + api.URL + `/api/apps/gone/env): check the name with "tori apps list"`},
		{[]string{"deploys", "show", "nope", "-a", "svc"}, `deploy "nope" of app "svc" not found (GET ` + api.URL + `/api/apps/svc/deploys/nope): "tori deploys list -a svc" lists its deploys`},
		{[]string{"domains", "list", "-a", "svc"}, `unauthorized (GET ` + api.URL + `/api/apps/svc/domains): sign in again with "tori login"`},
		{[]string{"env", "set", "A=bad", "-a", "svc"}, `app "svc": invalid_env_value: value must be a string (PATCH ` + api.URL + `/api/apps/svc/env)`},
		{[]string{"logs", "-a", "svc"}, `app "svc": internal (GET ` + api.URL + `/api/apps/svc/logs): the API could not answer now; try again shortly`},
	}
	for _, tc := range cases {
		code, _, stderr := run(t, api.URL, "", tc.args...)
		if code != ExitFailure || !strings.Contains(stderr, tc.want) {
			t.Errorf("tori %s: exit %d\nstderr %q\nwant   %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// -a is offered by the commands that work on one app, and by no other. Two commands name
// apps without working on one: `audit --app` filters the log and `tokens create --app` pins a
// token; they take --app alone (no -a, no $TORI_APP), so -a keeps its one meaning.
func TestAppFlagOnlyWhereItApplies(t *testing.T) {
	s := &state{env: Env{Getenv: func(string) string { return "" }}}
	root := s.root()
	takesApp := map[string]bool{
		"tori apps show": true, "tori apps delete": true, "tori init": true, "tori open": true, "tori status": true,
		"tori deploy": true, "tori logs": true, "tori ps": true, "tori scale": true, "tori metrics": true,
	}
	groups := []string{"tori deploys", "tori env", "tori domains", "tori db", "tori cron", "tori previews", "tori drains"}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		want := takesApp[path]
		for _, g := range groups {
			if path == g || strings.HasPrefix(path, g+" ") {
				want = true
			}
		}
		if c.Name() == "help" || c.Name() == "completion" || strings.HasPrefix(path, "tori completion") {
			want = false
		}
		has := c.Flags().Lookup("app") != nil || c.PersistentFlags().Lookup("app") != nil || c.InheritedFlags().Lookup("app") != nil
		if path == "tori audit" || path == "tori tokens create" {
			if f := c.Flags().Lookup("app"); f == nil || f.Shorthand != "" {
				t.Errorf("%s: want --app without -a, got %v", path, f)
			}
			return
		}
		if has != want {
			t.Errorf("%s: has -a %v, want %v", path, has, want)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func TestStatusShowsTheAppAtAGlance(t *testing.T) {
	api := newFakeAPI(t)
	code, out, stderr := run(t, api.URL, "", "status", "-a", "svc")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"svc (service, running) in eu (eu-1)", "https://svc.apps.localhost", "d9 source, live since 2026-11-26T10:00:00.000Z", "Database:", "ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runEnv(t, api.URL, map[string]string{"TORI_APP": "site"}, "status")
	if code != 0 || !strings.Contains(out, "www.example.com (active), example.com (pending)") || !strings.Contains(out, "none yet") {
		t.Fatalf("static status: %d\n%s", code, out)
	}
	var got struct {
		App      struct{ Slug string }
		Deploy   *struct{ ID string }
		Database *struct{ Status string }
		Domains  []struct{ Hostname string }
	}
	code, out, _ = run(t, api.URL, "", "status", "-a", "svc", "--json")
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.App.Slug != "svc" || got.Deploy == nil || got.Deploy.ID != "d9" ||
		got.Database == nil || got.Database.Status != "ready" || got.Domains != nil {
		t.Fatalf("status --json: %d %v\n%s", code, err, out)
	}
}

func TestAppAliasesAndAppsAloneLists(t *testing.T) {
	api := newFakeAPI(t)
	for _, args := range [][]string{{"apps"}, {"app"}, {"app", "list"}, {"apps", "ls"}} {
		code, out, stderr := run(t, api.URL, "", args...)
		if code != 0 || !strings.Contains(out, "svc") || !strings.Contains(out, "site") {
			t.Errorf("tori %v: %d %q %q", args, code, out, stderr)
		}
	}
	if code, out, _ := run(t, api.URL, "", "app", "show", "svc"); code != 0 || !strings.Contains(out, "https://svc.apps.localhost") {
		t.Fatalf("tori app show: %d %q", code, out)
	}
}

// env set of several keys, env unset and env import each send one request.
func TestEnvChangesSendOneRequest(t *testing.T) {
	api := newFakeAPI(t)
	dotenv := filepath.Join(t.TempDir(), ".env")
	os.WriteFile(dotenv, []byte("A=1\nB=two words\n"), 0o600)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"env", "set", "A=1", "B=2", "A=3", "-a", "svc"}, `PATCH /api/apps/svc/env {"set":{"A":"3","B":"2"}}`},
		{[]string{"env", "unset", "A", "B", "-a", "svc"}, `PATCH /api/apps/svc/env {"unset":["A","B"]}`},
		{[]string{"env", "import", dotenv, "-a", "svc"}, `PATCH /api/apps/svc/env {"set":{"A":"1","B":"two words"}}`},
	}
	for _, tc := range cases {
		before := len(api.sent())
		code, out, stderr := run(t, api.URL, "", tc.args...)
		got := api.sent()[before:]
		if code != 0 || len(got) != 1 || got[0] != tc.want {
			t.Errorf("tori %s: exit %d, sent %q, want one %q (stderr %q)", strings.Join(tc.args, " "), code, got, tc.want, stderr)
		}
		if !strings.Contains(out, "on svc.") {
			t.Errorf("tori %s printed %q", strings.Join(tc.args, " "), out)
		}
	}
}

// Tab completes app names and the app's variable names from the API.
func TestCompletionOffersAppsAndEnvKeys(t *testing.T) {
	api := newFakeAPI(t)
	cases := []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"__complete", "apps", "show", ""}, []string{"svc\tservice", "site\tstatic", "shop\tstatic"}, ":4"},
		{[]string{"__complete", "logs", "--app", "s"}, []string{"svc\tservice", "site\tstatic", "shop\tstatic"}, ":4"},
		{[]string{"__complete", "env", "list", "-a", "si"}, []string{"site\tstatic"}, ":4"},
		{[]string{"__complete", "env", "unset", "-a", "svc", ""}, []string{"API_KEY", "DEBUG"}, ":4"},
		{[]string{"__complete", "env", "unset", "-a", "svc", "DEBUG", ""}, []string{"API_KEY"}, ":4"},
		{[]string{"__complete", "env", "set", "-a", "svc", "A"}, []string{"API_KEY="}, ":6"},
	}
	for _, tc := range cases {
		code, out, _ := run(t, api.URL, "", tc.args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) == 0 || lines[len(lines)-1] != tc.directive || strings.Join(lines[:len(lines)-1], "|") != strings.Join(tc.want, "|") {
			t.Errorf("%v: exit %d\n%q\nwant %q then %s", tc.args, code, out, tc.want, tc.directive)
		}
	}
	// Signed out: nothing offered, no error shown.
	var outb, errb strings.Builder
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TORI_API_URL": api.URL}
	code := Main(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: &outb, Stderr: &errb, Getenv: func(k string) string { return env[k] }},
		[]string{"__complete", "apps", "show", ""})
	if code != 0 || strings.TrimSpace(outb.String()) != ":4" {
		t.Fatalf("signed out: %d %q", code, outb.String())
	}
}

// tori domains list shows each hostname's certificate, and the CA's reason for a failure.
func TestDomainsListShowsCertificates(t *testing.T) {
	api := newFakeAPI(t)
	code, out, stderr := run(t, api.URL, "", "domains", "list", "-a", "site")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"CERTIFICATE", "issued, until 2027-02-25", "failed", "example.com: certificate failed: urn:ietf:params:acme:error:connection: refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("domains list lacks %q:\n%s", want, out)
		}
	}
}
