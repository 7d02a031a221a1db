package e2e

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// runAs runs tori as account a (TORI_TOKEN) with more environment, in dir when set.
func (c *toriCLI) runAs(a harness.Account, dir string, extra []string, args ...string) (int, string, string) {
	c.t.Helper()
	cmd := c.command(args...)
	cmd.Env = append(cmd.Env, append([]string{"TORI_TOKEN=" + a.Token}, extra...)...)
	cmd.Dir = dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		c.t.Fatalf("tori %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// The CLI's habits through the whole control plane: env changes of several keys in one
// request (all or none), TORI_APP, status, messages that name the app and the URL, exit
// codes, and completion from the API.
func TestCLIFitsIn(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "clifit")
	other := s.NewAccount(t, "clifit-other")
	c := newToriCLI(t, s)
	dir := t.TempDir()
	run := func(extra []string, args ...string) (int, string, string) {
		t.Helper()
		return c.runAs(a, dir, extra, args...)
	}
	ok := func(extra []string, args ...string) string {
		t.Helper()
		code, out, errs := run(extra, args...)
		if code != 0 {
			t.Fatalf("tori %v: exit %d\nstdout %s\nstderr %s", args, code, out, errs)
		}
		return out
	}
	slug := "fit-" + harness.Hex(4)
	ok(nil, "apps", "create", slug, "--kind", "service")
	envPath := "/api/apps/" + slug + "/env"
	keys := func() string {
		t.Helper()
		var vars []struct{ Key string }
		s.Get(t, envPath, a.Token).JSON(t, &vars)
		var ks []string
		for _, v := range vars {
			ks = append(ks, v.Key)
		}
		return strings.Join(ks, " ")
	}

	t.Run("env set of several keys is one request, all or none", func(t *testing.T) {
		if out := ok(nil, "env", "set", "ALPHA=1", "BETA=two words", "-a", slug); !strings.Contains(out, "Set ALPHA, BETA on "+slug) {
			t.Fatalf("env set printed %q", out)
		}
		if k := keys(); k != "ALPHA BETA" {
			t.Fatalf("keys %q", k)
		}
		// One value over the 32 KiB limit: the good one beside it is not written either.
		code, _, errs := run(nil, "env", "set", "GAMMA=3", "HUGE="+strings.Repeat("x", 32<<10+1), "-a", slug)
		want := `app "` + slug + `": invalid_env_value`
		if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "(PATCH "+s.Gateway+envPath+")") {
			t.Fatalf("exit %d stderr %q", code, errs)
		}
		if k := keys(); k != "ALPHA BETA" {
			t.Fatalf("after a refused change keys %q: half-written", k)
		}
		// Unset of a name never set is no change; the rest goes.
		ok(nil, "env", "unset", "ALPHA", "NEVER_SET", "-a", slug)
		if k := keys(); k != "BETA" {
			t.Fatalf("after unset keys %q", k)
		}
	})

	t.Run("the route through the gateway checks the owner and the token", func(t *testing.T) {
		change := map[string]any{"set": map[string]string{"STOLEN": "x"}, "unset": []string{"BETA"}}
		if r := s.Do(t, harness.Request{Method: http.MethodPatch, Path: envPath, Token: other.Token, Body: change}); r.Status != http.StatusNotFound {
			t.Fatalf("another account: %d %s", r.Status, r.Body)
		}
		if r := s.Do(t, harness.Request{Method: http.MethodPatch, Path: envPath, Body: change}); r.Status != http.StatusUnauthorized {
			t.Fatalf("no token: %d %s", r.Status, r.Body)
		}
		if k := keys(); k != "BETA" {
			t.Fatalf("keys %q after refused changes", k)
		}
		r := s.Do(t, harness.Request{Method: http.MethodPatch, Path: envPath, Token: a.Token,
			Body: map[string]any{"set": map[string]string{"DELTA": "delta-value"}}})
		var vars []struct{ Key, Value string }
		r.JSON(t, &vars)
		if r.Status != http.StatusOK || len(vars) != 2 || vars[0].Key != "BETA" || vars[1].Key != "DELTA" || vars[1].Value != "de********" {
			t.Fatalf("owner's change: %d %s", r.Status, r.Body)
		}
	})

	t.Run("TORI_APP names the app, -a wins over it", func(t *testing.T) {
		out := ok([]string{"TORI_APP=" + slug}, "env", "list")
		if !strings.Contains(out, "BETA") {
			t.Fatalf("env list with TORI_APP: %q", out)
		}
		code, _, errs := run([]string{"TORI_APP=" + slug}, "env", "list", "-a", "nope-"+harness.Hex(3))
		if code != 1 || !strings.Contains(errs, "not found") {
			t.Fatalf("-a over TORI_APP: %d %q", code, errs)
		}
	})

	t.Run("status", func(t *testing.T) {
		out := ok(nil, "status", "-a", slug)
		for _, want := range []string{slug + " (service, ", "https://" + slug + ".", "Deploy:", "none yet", "Database:", "none"} {
			if !strings.Contains(out, want) {
				t.Fatalf("status lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("messages name the app, the URL and what to do; usage exits 2", func(t *testing.T) {
		code, out, errs := run(nil, "apps", "show", "nope")
		want := `Error: app "nope" not found (GET ` + s.Gateway + `/api/apps/nope): check the name with "tori apps list"`
		if code != 1 || out != "" || strings.TrimSpace(errs) != want {
			t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
		}
		if code, _, errs := run(nil, "apps", "show", "a", "b"); code != 2 || !strings.Contains(errs, "--help") {
			t.Fatalf("usage: exit %d stderr %q", code, errs)
		}
		if code, _, _ := run(nil, "whoami", "-a", slug); code != 2 {
			t.Fatalf("-a on whoami: exit %d", code)
		}
	})

	t.Run("completion offers app names and variable names", func(t *testing.T) {
		if out := ok(nil, "__complete", "status", "-a", "fit-"); !strings.Contains(out, slug+"\tservice") {
			t.Fatalf("app completion %q", out)
		}
		if out := ok(nil, "__complete", "env", "unset", "-a", slug, ""); !strings.Contains(out, "BETA\n") || !strings.Contains(out, "DELTA\n") {
			t.Fatalf("env completion %q", out)
		}
	})
}
