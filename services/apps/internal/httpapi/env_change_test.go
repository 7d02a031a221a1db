package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/env"
)

// listed is the app's variables as GET lists them, "KEY=masked" in order.
func listed(t *testing.T, s *apptest.Service, acct, path string) string {
	t.Helper()
	var vars []map[string]any
	s.Must(http.StatusOK, acct, http.MethodGet, path, nil).JSON(t, &vars)
	var out []string
	for _, v := range vars {
		out = append(out, fmt.Sprintf("%v=%v", v["key"], v["value"]))
	}
	return strings.Join(out, " ")
}

// One PATCH sets new names, replaces held ones and removes others; a name to remove that the
// app lacks is no change, so sending the same change again answers the same.
func TestEnvChangeSetsAndUnsetsInOneRequest(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "svc", "kind": "service"})
	const path = "/api/apps/svc/env"
	s.Must(http.StatusCreated, acct, http.MethodPut, path, map[string]any{"key": "OLD", "value": "old-value"})
	s.Must(http.StatusCreated, acct, http.MethodPut, path, map[string]any{"key": "KEEP", "value": "kept-value"})
	s.Must(http.StatusCreated, acct, http.MethodPut, path, map[string]any{"key": "REPLACED", "value": "first"})

	change := map[string]any{
		"set":   map[string]any{"NEW_A": "new-value-a", "REPLACED": "second-value", "EMPTY": ""},
		"unset": []string{"OLD", "NEVER_SET", "OLD"},
	}
	want := "EMPTY=******** KEEP=ke******** NEW_A=ne******** REPLACED=sec********"
	for round := 1; round <= 2; round++ {
		r := s.Must(http.StatusOK, acct, http.MethodPatch, path, change)
		var answer []map[string]any
		r.JSON(t, &answer)
		var got []string
		for _, v := range answer {
			if len(v) != 2 {
				t.Fatalf("round %d: entry %v has fields beyond key and value", round, v)
			}
			got = append(got, fmt.Sprintf("%v=%v", v["key"], v["value"]))
		}
		if strings.Join(got, " ") != want {
			t.Fatalf("round %d answer %q, want %q", round, strings.Join(got, " "), want)
		}
		if l := listed(t, s, acct, path); l != want {
			t.Fatalf("round %d list %q, want %q", round, l, want)
		}
		if strings.Contains(string(r.Body), "new-value-a") || strings.Contains(string(r.Body), "second-value") {
			t.Fatalf("a value in the answer: %s", r.Body)
		}
	}
	// Removing only: the list shrinks, and nothing else moves.
	s.Must(http.StatusOK, acct, http.MethodPatch, path, map[string]any{"unset": []string{"EMPTY", "KEEP"}})
	if l := listed(t, s, acct, path); l != "NEW_A=ne******** REPLACED=sec********" {
		t.Fatalf("after unset: %q", l)
	}
}

// Any refused key or value, or a malformed change, leaves every variable as it was, with the
// single write's error words.
func TestEnvChangeIsAllOrNone(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "svc", "kind": "service"})
	const path = "/api/apps/svc/env"
	s.Must(http.StatusCreated, acct, http.MethodPut, path, map[string]any{"key": "HELD", "value": "held-value"})
	before := listed(t, s, acct, path)

	tooMany := map[string]any{}
	for i := 0; i <= env.MaxChangeKeys; i++ {
		tooMany[fmt.Sprintf("K_%03d", i)] = "v"
	}
	cases := []struct {
		name string
		body any
		word string
	}{
		{"a bad name among good ones", map[string]any{"set": map[string]any{"GOOD": "1", "bad-name": "2"}, "unset": []string{"HELD"}}, "invalid_env_key"},
		{"a name too long", map[string]any{"set": map[string]any{"GOOD": "1", "A" + strings.Repeat("B", env.MaxKeyLength): "2"}}, "invalid_env_key"},
		{"a value with NUL", map[string]any{"set": map[string]any{"GOOD": "1", "NUL": "a\x00b"}, "unset": []string{"HELD"}}, "invalid_env_value"},
		{"a value too big", map[string]any{"set": map[string]any{"GOOD": "1", "BIG": strings.Repeat("x", env.MaxValueBytes+1)}}, "invalid_env_value"},
		{"a value not a string", map[string]any{"set": map[string]any{"GOOD": "1", "NUM": 5}}, "invalid_env_value"},
		{"a name to remove not a string", map[string]any{"set": map[string]any{"GOOD": "1"}, "unset": []any{"HELD", 7}}, "invalid_env_key"},
		{"a bad name to remove", map[string]any{"set": map[string]any{"GOOD": "1"}, "unset": []string{"HELD", "lower"}}, "invalid_env_key"},
		{"a name both set and removed", map[string]any{"set": map[string]any{"GOOD": "1", "HELD": "x"}, "unset": []string{"HELD"}}, "invalid_env_change"},
		{"nothing named", map[string]any{}, "invalid_env_change"},
		{"set not an object", map[string]any{"set": []string{"GOOD=1"}}, "invalid_env_change"},
		{"unset not a list", map[string]any{"unset": "HELD"}, "invalid_env_change"},
		{"too many names", map[string]any{"set": tooMany}, "invalid_env_change"},
		{"not an object", `["GOOD"]`, "invalid_json"},
		{"not JSON", `{"set":`, "invalid_json"},
	}
	for _, tc := range cases {
		r := s.Do(acct, http.MethodPatch, path, tc.body)
		if m := r.Map(t); r.Status != http.StatusBadRequest || m["error"] != tc.word {
			t.Errorf("%s: %d %s, want 400 %s", tc.name, r.Status, r.Body, tc.word)
		}
		if after := listed(t, s, acct, path); after != before {
			t.Fatalf("%s: variables changed to %q from %q", tc.name, after, before)
		}
	}
}

// The cap counts the change as a whole: adding past MaxVarsPerApp is refused with nothing
// written, unless the same change removes enough; a change that adds nothing always passes.
func TestEnvChangeHoldsThePlanLimit(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "svc", "kind": "service"})
	const path = "/api/apps/svc/env"
	fill := map[string]any{}
	for i := 1; i < env.MaxVarsPerApp; i++ {
		fill[fmt.Sprintf("VAR_%03d", i)] = "v"
	}
	s.Must(http.StatusOK, acct, http.MethodPatch, path, map[string]any{"set": fill}) // 199 held
	count := func() int {
		var vars []map[string]any
		s.Must(http.StatusOK, acct, http.MethodGet, path, nil).JSON(t, &vars)
		return len(vars)
	}

	r := s.Do(acct, http.MethodPatch, path, map[string]any{"set": map[string]any{"NEW_1": "v", "NEW_2": "v", "VAR_001": "changed"}})
	body := r.Map(t)
	if r.Status != http.StatusForbidden || body["code"] != "env_limit_reached" || body["limit"] != float64(env.MaxVarsPerApp) || body["plan"] != "nestling" {
		t.Fatalf("two over the cap: %d %v", r.Status, body)
	}
	if n := count(); n != env.MaxVarsPerApp-1 {
		t.Fatalf("%d held after a refused change, want %d", n, env.MaxVarsPerApp-1)
	}
	// Two new and one removed: 200 exactly.
	s.Must(http.StatusOK, acct, http.MethodPatch, path, map[string]any{"set": map[string]any{"NEW_1": "v", "NEW_2": "v"}, "unset": []string{"VAR_002"}})
	if n := count(); n != env.MaxVarsPerApp {
		t.Fatalf("%d held, want %d", n, env.MaxVarsPerApp)
	}
	// At the cap: replacing and removing still work; one more name does not.
	s.Must(http.StatusOK, acct, http.MethodPatch, path, map[string]any{"set": map[string]any{"VAR_003": "replaced"}, "unset": []string{"NOT_HELD"}})
	s.Must(http.StatusForbidden, acct, http.MethodPatch, path, map[string]any{"set": map[string]any{"NEW_3": "v"}})
}

// Another account's app, an unknown one and a deleted one are 404 before the body is judged,
// and the owner's variables are untouched.
func TestEnvChangeChecksOwnershipFirst(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{Env: map[string]string{"APPS_CLEANUP_SERVICES": ""}})
	owner, other := apptest.NewAccount(), apptest.NewAccount()
	s.CreateApp(owner, map[string]any{"name": "private", "kind": "service"})
	s.CreateApp(owner, map[string]any{"name": "gone", "kind": "service"})
	s.Must(http.StatusCreated, owner, http.MethodPut, "/api/apps/private/env", map[string]any{"key": "TOKEN", "value": "owners-value"})
	s.Must(http.StatusOK, owner, http.MethodDelete, "/api/apps/gone", nil)
	for _, tc := range []struct {
		acct, path string
		body       any
	}{
		{other, "/api/apps/private/env", map[string]any{"set": map[string]any{"TOKEN": "stolen"}}},
		{other, "/api/apps/private/env", map[string]any{"unset": []string{"TOKEN"}}},
		{other, "/api/apps/private/env", `not json`},
		{owner, "/api/apps/nope/env", map[string]any{"set": map[string]any{"A": "1"}}},
		{owner, "/api/apps/gone/env", map[string]any{"set": map[string]any{"A": "1"}}},
	} {
		r := s.Do(tc.acct, http.MethodPatch, tc.path, tc.body)
		if r.Status != http.StatusNotFound || r.Map(t)["error"] != "not found" {
			t.Errorf("%s %v: %d %s", tc.path, tc.body, r.Status, r.Body)
		}
	}
	if l := listed(t, s, owner, "/api/apps/private/env"); l != "TOKEN=own********" {
		t.Fatalf("owner's variables %q", l)
	}
	if r := s.Do("-", http.MethodPatch, "/api/apps/private/env", map[string]any{"unset": []string{"TOKEN"}}); r.Status != http.StatusUnauthorized {
		t.Fatalf("unsigned: %d", r.Status)
	}
}
