package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	"tori.dev/tests/e2e/harness"
)

// toriCLI runs the built bin/tori against a stack, with a config folder of its own.
type toriCLI struct {
	t   *testing.T
	s   *harness.Stack
	bin string
	cfg string
}

func newToriCLI(t *testing.T, s *harness.Stack) *toriCLI {
	return &toriCLI{t: t, s: s, bin: harness.Tori(t), cfg: t.TempDir()}
}

func (c *toriCLI) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "XDG_CONFIG_HOME=" + c.cfg,
		"TORI_API_URL=" + c.s.Gateway, "TORI_NO_BROWSER=1"}
	return cmd
}

// run runs tori to its end and returns its exit code and output.
func (c *toriCLI) run(stdin string, args ...string) (int, string, string) {
	c.t.Helper()
	cmd := c.command(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		c.t.Fatalf("tori %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// ok runs tori and fails the test unless it exits 0.
func (c *toriCLI) ok(args ...string) string {
	c.t.Helper()
	code, out, errs := c.run("", args...)
	if code != 0 {
		c.t.Fatalf("tori %v exited %d\nstdout: %s\nstderr: %s", args, code, out, errs)
	}
	return out
}

func (c *toriCLI) json(v any, args ...string) {
	c.t.Helper()
	out := c.ok(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("tori %v --json printed no JSON: %v\n%s", args, err, out)
	}
}

var userCodeRE = regexp.MustCompile(`\b[BCDFGHJKMNPQRSTVWXYZ2345679]{4}-[BCDFGHJKMNPQRSTVWXYZ2345679]{4}\b`)

// deviceFlow runs a tori command that signs in by device code, approves the code it prints
// with the account's session (as the console would), and returns its output.
func (c *toriCLI) deviceFlow(session string, args ...string) (string, string) {
	c.t.Helper()
	cmd := c.command(args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	var stderr strings.Builder
	code := ""
	sc := bufio.NewScanner(pr)
	for code == "" && sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		code = userCodeRE.FindString(sc.Text())
	}
	if code == "" {
		c.t.Fatalf("tori %v printed no user code:\n%s", args, stderr.String())
	}
	go io.Copy(&stderr, pr)
	r := post(c.s, c.t, "/api/auth/cli/approve", session, map[string]string{"userCode": code})
	if r.Status != http.StatusOK {
		c.t.Fatalf("approve %s: %d %s", code, r.Status, r.Body)
	}
	select {
	case err := <-done:
		if err != nil {
			c.t.Fatalf("tori %v: %v\nstdout: %s\nstderr: %s", args, err, out.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		c.t.Fatalf("tori %v did not finish after approval", args)
	}
	return out.String(), stderr.String()
}

func writeTree(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCLI(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "cli")
	c := newToriCLI(t, s)

	// Device sign-in: the code is approved with a session; the API token lands in 0600.
	out, _ := c.deviceFlow(a.Token, "login")
	if !strings.Contains(out, "Signed in as "+a.Email) {
		t.Fatalf("login printed %q", out)
	}
	cfgPath := filepath.Join(c.cfg, "tori", "config.json")
	st, err := os.Stat(cfgPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v", st, err)
	}
	var cfg struct{ Token, TokenID, APIURL string }
	b, _ := os.ReadFile(cfgPath)
	json.Unmarshal(b, &cfg)
	if !strings.HasPrefix(cfg.Token, "svc_") || cfg.TokenID == "" {
		t.Fatalf("config %s", b)
	}
	var who struct {
		User struct{ Email string } `json:"user"`
		Plan string                 `json:"plan"`
	}
	c.json(&who, "whoami")
	if who.User.Email != a.Email || who.Plan != "nestling" {
		t.Fatalf("whoami: %+v", who)
	}

	t.Run("static deploy of a folder is served by the edge", func(t *testing.T) {
		var app struct{ Slug, Kind string }
		c.json(&app, "apps", "create")
		site := writeTree(t, map[string]string{"index.html": "<h1>from the cli</h1>", "assets/app.js": "console.log('cli')"})
		code, out, errs := c.run("", "deploy", site, "--app", app.Slug)
		if code != 0 || !strings.Contains(out, "Live:") || !strings.Contains(errs, "Uploading 2 files") {
			t.Fatalf("deploy exited %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
		// Piped: no bar, no colour.
		if strings.Contains(out+errs, "\x1b[") || strings.Contains(errs, "\r") {
			t.Fatalf("escapes in piped output: %q %q", out, errs)
		}
		waitEdge(t, s, app.Slug, "/", "<h1>from the cli</h1>")
		waitEdge(t, s, app.Slug, "/assets/app.js", "console.log('cli')")
	})

	var svc struct{ ID, Slug string }
	c.json(&svc, "apps", "create", "--kind", "service")

	t.Run("env set KEY - reads standard input", func(t *testing.T) {
		code, _, errs := c.run("hello-from-env\n", "env", "set", "GREETING", "-", "--app", svc.Slug)
		if code != 0 {
			t.Fatalf("env set: %d %s", code, errs)
		}
		var vars []struct{ Key, Value string }
		c.json(&vars, "env", "list", "--app", svc.Slug)
		if len(vars) != 1 || vars[0].Key != "GREETING" || vars[0].Value != "hel********" {
			t.Fatalf("env list: %+v", vars)
		}
	})

	// A service whose page shows which version and whether its release ran.
	source := func(version string) string {
		return writeTree(t, map[string]string{
			"tori.json":  `{"build": "echo building with $GREETING", "start": "python3 -m http.server $PORT --bind 127.0.0.1"}`,
			"index.html": "version " + version,
		})
	}
	var first string
	t.Run("source deploy streams its build output and exits 0", func(t *testing.T) {
		// The release lasts long enough for the CLI's half-second poll to see it: a step it
		// never observes it cannot show.
		code, out, errs := c.run("", "deploy", source("1"), "--app", svc.Slug, "--release", "sleep 2")
		if code != 0 {
			t.Fatalf("deploy exited %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
		if !regexp.MustCompile(`(?m)^build\s+building with \[redacted\]$`).MatchString(out) || !strings.Contains(out, "Live:") {
			t.Fatalf("no build line or no Live in\n%s\nstderr: %s", out, errs)
		}
		if strings.Contains(out+errs, "hello-from-env") {
			t.Fatal("an environment value reached the output")
		}
		for _, step := range []string{"building", "releasing", "live"} {
			if !strings.Contains(errs, step) {
				t.Fatalf("step %s not shown:\n%s", step, errs)
			}
		}
		waitEdge(t, s, svc.Slug, "/", "version 1")
		var ds []struct{ ID, Status string }
		c.json(&ds, "deploys", "list", "--app", svc.Slug)
		if len(ds) != 1 || ds[0].Status != "live" {
			t.Fatalf("deploys: %+v", ds)
		}
		first = ds[0].ID
	})

	t.Run("a failing release exits 1", func(t *testing.T) {
		code, out, errs := c.run("", "deploy", source("2"), "--app", svc.Slug, "--release", "false")
		if code != 1 || !strings.Contains(errs, "release_failed") {
			t.Fatalf("deploy exited %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
		waitEdge(t, s, svc.Slug, "/", "version 1")
	})

	t.Run("rollback", func(t *testing.T) {
		if first == "" {
			t.Skip("no first deploy")
		}
		c.ok("deploy", source("3"), "--app", svc.Slug)
		waitEdge(t, s, svc.Slug, "/", "version 3")
		code, out, errs := c.run("", "deploys", "rollback", first, "--app", svc.Slug)
		if code != 0 || !strings.Contains(out, "Live:") {
			t.Fatalf("rollback exited %d\nstdout: %s\nstderr: %s", code, out, errs)
		}
		waitEdge(t, s, svc.Slug, "/", "version 1")
		var d struct{ RollbackOf *string }
		var ds []json.RawMessage
		c.json(&ds, "deploys", "list", "--app", svc.Slug, "--limit", "1")
		json.Unmarshal(ds[0], &d)
		if d.RollbackOf == nil || *d.RollbackOf != first {
			t.Fatalf("newest deploy %s", ds[0])
		}
	})

	t.Run("logs --follow sees later lines once", func(t *testing.T) {
		cmd := c.command("logs", "--follow", "--json", "--since", "10m", "--app", svc.Slug)
		pr, pw := io.Pipe()
		cmd.Stdout = pw
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		go func() { cmd.Wait(); pw.Close() }()
		var mu sync.Mutex
		count := map[string]int{}
		messages := map[string]int{}
		lines := make(chan string, 1000)
		go func() {
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				var e struct{ ID, Message string }
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Errorf("not a JSON line: %q", sc.Text())
					continue
				}
				mu.Lock()
				count[e.ID]++
				messages[e.Message]++
				mu.Unlock()
				lines <- e.Message
			}
			close(lines)
		}()
		// The build lines of the deploys above come first: tori is following the stream.
		select {
		case <-lines:
		case <-time.After(30 * time.Second):
			t.Fatalf("no line from logs --follow; stderr %s", errb.String())
		}
		deploy := uuid.NewString()
		publish := func(msg string, ts time.Time) {
			s.PublishEvent(t, "zone.logs.batch", &logsv1.LogBatch{Entries: []*logsv1.LogEntry{{
				AppId: svc.ID, DeployId: deploy, Stream: "stdout", Timestamp: timestamppb.New(ts), Message: msg}}})
		}
		waitFor := func(msg string) {
			t.Helper()
			harness.Eventually(t, 20*time.Second, msg, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return messages[msg] > 0
			})
		}
		now := time.Now()
		publish("cli-marker-1", now)
		waitFor("cli-marker-1")
		// Written later but stamped 5 s back (inside the 10 s overlap): still seen.
		publish("cli-marker-late", now.Add(-5*time.Second))
		waitFor("cli-marker-late")
		// A later marker after the late one: nothing came twice.
		publish("cli-marker-2", time.Now())
		waitFor("cli-marker-2")
		publish("cli-marker-3", time.Now().Add(time.Second))
		waitFor("cli-marker-3")
		mu.Lock()
		defer mu.Unlock()
		for id, n := range count {
			if n != 1 {
				t.Fatalf("line %s printed %d times", id, n)
			}
		}
		for _, m := range []string{"cli-marker-1", "cli-marker-late", "cli-marker-2", "cli-marker-3"} {
			if messages[m] != 1 {
				t.Fatalf("%s printed %d times", m, messages[m])
			}
		}
	})

	t.Run("a token created and revoked", func(t *testing.T) {
		out, errs := c.deviceFlow(a.Token, "tokens", "create", "ci-"+harness.Hex(3))
		secret := strings.TrimSpace(out)
		if !strings.HasPrefix(secret, "svc_") || !strings.Contains(errs, "shown only now") {
			t.Fatalf("tokens create printed %q / %q", out, errs)
		}
		if r := s.Get(t, "/api/account", secret); r.Status != http.StatusOK {
			t.Fatalf("new token: %d", r.Status)
		}
		var toks []struct{ ID, Name, Prefix string }
		c.json(&toks, "tokens", "list")
		id := ""
		for _, tk := range toks {
			if strings.HasPrefix(tk.Name, "ci-") && strings.HasPrefix(secret, tk.Prefix) {
				id = tk.ID
			}
		}
		if id == "" {
			t.Fatalf("the new token is not listed: %+v", toks)
		}
		// No terminal and no --yes: refused, nothing revoked.
		if code, _, errs := c.run("", "tokens", "revoke", id); code != 1 || !strings.Contains(errs, "--yes") {
			t.Fatalf("revoke without --yes: %d %s", code, errs)
		}
		c.ok("tokens", "revoke", id, "--yes")
		harness.Eventually(t, 5*time.Second, "the revoked token refused", func() bool {
			return s.Get(t, "/api/account", secret).Status == http.StatusUnauthorized
		})
	})

	t.Run("errors name the object, the request and what to do", func(t *testing.T) {
		id := uuid.NewString()
		code, out, errs := c.run("", "deploys", "show", id, "--app", svc.Slug)
		want := `Error: deploy "` + id + `" of app "` + svc.Slug + `" not found (GET ` + s.Gateway + `/api/apps/` + svc.Slug + `/deploys/` + id + `): "tori deploys list -a ` + svc.Slug + `" lists its deploys`
		if code != 1 || out != "" || !strings.HasPrefix(errs, want) {
			t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
		}
	})

	t.Run("logout revokes the token", func(t *testing.T) {
		c.ok("logout")
		harness.Eventually(t, 5*time.Second, "the logged-out token refused", func() bool {
			return s.Get(t, "/api/account", cfg.Token).Status == http.StatusUnauthorized
		})
		if code, _, errs := c.run("", "whoami"); code != 1 || !strings.Contains(errs, "tori login") {
			t.Fatalf("whoami after logout: %d %s", code, errs)
		}
	})
}
