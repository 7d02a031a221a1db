package commands

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func TestEveryCommandHasAnExample(t *testing.T) {
	s := &state{env: Env{Getenv: func(string) string { return "" }}}
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(s.root())
	if n < 30 {
		t.Fatalf("only %d commands", n)
	}
}

func TestParseAssignments(t *testing.T) {
	cases := []struct {
		args  []string
		stdin string
		want  string
		err   string
	}{
		{[]string{"A=1", "B_2=x=y"}, "", "[[A 1] [B_2 x=y]]", ""},
		{[]string{"EMPTY="}, "", "[[EMPTY ]]", ""},
		{[]string{"KEY", "-"}, "multi\nline\n", "[[KEY multi\nline]]", ""},
		{[]string{"KEY", "-"}, "crlf\r\n", "[[KEY crlf]]", ""},
		{[]string{"lower=1"}, "", "", "not a variable name"},
		{[]string{"NOEQUALS"}, "", "", "want KEY=VALUE"},
		{[]string{"bad", "-"}, "", "", "not a variable name"},
	}
	for _, tc := range cases {
		got, err := ParseAssignments(tc.args, strings.NewReader(tc.stdin))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		var b strings.Builder
		b.WriteString("[")
		for i, kv := range got {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString("[" + kv[0] + " " + kv[1] + "]")
		}
		b.WriteString("]")
		if b.String() != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, b.String(), tc.want)
		}
	}
}

func TestParseDotenv(t *testing.T) {
	in := "# comment\n\nexport A=1\nB = 'single # kept'\nC=\"a\\nb \\\"q\\\"\"\nD=plain # dropped\n"
	got, err := ParseDotenv(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"A", "1"}, {"B", "single # kept"}, {"C", "a\nb \"q\""}, {"D", "plain"}}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %q, want %q", i, got[i], want[i])
		}
	}
	if _, err := ParseDotenv(strings.NewReader("not a line\n")); err == nil {
		t.Fatal("no error for a bad line")
	}
}

func TestParseSince(t *testing.T) {
	for in, want := range map[string]time.Duration{"1h": time.Hour, "90m": 90 * time.Minute, "2d": 48 * time.Hour} {
		if got, err := ParseSince(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "-1h", "yesterday", "0d"} {
		if _, err := ParseSince(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// run executes tori in-process against api with a fresh config folder.
func run(t *testing.T, api string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runWith(t, context.Background(), api, stdin, nil, args...)
}

// runEnv is run with more environment variables.
func runEnv(t *testing.T, api string, extra map[string]string, args ...string) (int, string, string) {
	t.Helper()
	return runWith(t, context.Background(), api, "", extra, args...)
}

func runWith(t *testing.T, ctx context.Context, api, stdin string, extra map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TORI_API_URL": api, "TORI_TOKEN": "svc_test"}
	for k, v := range extra {
		env[k] = v
	}
	code := Main(ctx, Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] },
		Timeout: 2 * time.Second}, args)
	return code, out.String(), errb.String()
}

func TestDeleteRefusesWithoutATerminalOrYes(t *testing.T) {
	deletes := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes++
		}
		w.Write([]byte(`{"ok":true,"reclaimed":false}`))
	}))
	defer srv.Close()
	code, _, stderr := run(t, srv.URL, "my-site\n", "apps", "delete", "my-site")
	if code != 1 || !strings.Contains(stderr, "pass --yes") || deletes != 0 {
		t.Fatalf("code %d deletes %d stderr %q", code, deletes, stderr)
	}
	code, out, _ := run(t, srv.URL, "", "apps", "delete", "my-site", "--yes")
	if code != 0 || deletes != 1 || !strings.Contains(out, "Deleted my-site") {
		t.Fatalf("code %d deletes %d out %q", code, deletes, out)
	}
}

func TestAPIErrorsExitOneInTheAPIsWords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		w.Write([]byte(`{"error":"not found"}`))
	}))
	defer srv.Close()
	code, out, stderr := run(t, srv.URL, "", "apps", "show", "nope")
	want := `Error: app "nope" not found (GET ` + srv.URL + `/api/apps/nope): check the name with "tori apps list"` + "\n"
	if code != 1 || stderr != want || out != "" {
		t.Fatalf("code %d out %q stderr %q", code, out, stderr)
	}
	code, out, _ = run(t, srv.URL, "", "apps", "show", "nope", "--json")
	if code != 1 || strings.TrimSpace(out) != `{"error":"not found"}` {
		t.Fatalf("--json error: code %d out %q", code, out)
	}
}

// The app is -a, else TORI_APP, else tori.json.
func TestAppComesFromFlagOrToriJSON(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Write([]byte(`[]`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "tori.json"), []byte(`{"app":"from-file","start":"x"}`), 0o644)
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	if code, _, e := run(t, srv.URL, "", "env", "list"); code != 0 {
		t.Fatal(e)
	}
	if code, _, e := run(t, srv.URL, "", "env", "list", "--app", "from-flag"); code != 0 {
		t.Fatal(e)
	}
	if code, _, e := runEnv(t, srv.URL, map[string]string{"TORI_APP": "from-variable"}, "env", "list"); code != 0 {
		t.Fatal(e)
	}
	if code, _, e := runEnv(t, srv.URL, map[string]string{"TORI_APP": "from-variable"}, "env", "list", "-a", "from-flag"); code != 0 {
		t.Fatal(e)
	}
	if got := strings.Join(paths, " "); got != "/api/apps/from-file/env /api/apps/from-flag/env /api/apps/from-variable/env /api/apps/from-flag/env" {
		t.Fatalf("paths %v", got)
	}
	os.Remove(filepath.Join(dir, "tori.json"))
	if code, _, e := run(t, srv.URL, "", "env", "list"); code != 2 || !strings.Contains(e, "--app") || !strings.Contains(e, "TORI_APP") {
		t.Fatalf("code %d stderr %q", code, e)
	}
}

func TestSignInIsNeeded(t *testing.T) {
	var out, errb bytes.Buffer
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	code := Main(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}, []string{"apps", "list"})
	if code != 1 || !strings.Contains(errb.String(), "tori login") {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
}

// --clear-cache is for a service's source: with --image or to a static app it is a usage
// error and nothing is sent.
func TestClearCacheIsForServiceSource(t *testing.T) {
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts++
		}
		w.Write([]byte(`{"id":"a1","slug":"site","kind":"static"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("hi"), 0o644)
	code, _, stderr := run(t, srv.URL, "", "deploy", dir, "--app", "site", "--clear-cache")
	if code != 2 || !strings.Contains(stderr, "--clear-cache is for service apps") {
		t.Fatalf("static app: code %d stderr %q", code, stderr)
	}
	code, _, stderr = run(t, srv.URL, "", "deploy", "--app", "svc", "--image", "ghcr.io/a/b@sha256:"+strings.Repeat("ab", 32), "--clear-cache")
	if code != 2 || !strings.Contains(stderr, "--clear-cache goes with a service's source") {
		t.Fatalf("image: code %d stderr %q", code, stderr)
	}
	if posts != 0 {
		t.Fatalf("%d deploys sent", posts)
	}
}
