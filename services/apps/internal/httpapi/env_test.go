package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"tori.dev/services/apps/internal/apptest"
)

func TestEnvPutCreatesThenUpdatesOnEveryKind(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "site"}) // static: stored, never read
	s.CreateApp(acct, map[string]any{"name": "svc", "kind": "service"})
	for _, slug := range []string{"site", "svc"} {
		path := "/api/apps/" + slug + "/env"
		r := s.Must(http.StatusCreated, acct, http.MethodPut, path, map[string]any{"key": "API_TOKEN", "value": "first-value-123"})
		if m := r.Map(t); m["key"] != "API_TOKEN" || m["value"] != "fir********" || len(m) != 2 {
			t.Errorf("%s create answer %v", slug, m)
		}
		s.Must(http.StatusOK, acct, http.MethodPut, path, map[string]any{"key": "API_TOKEN", "value": "second"})
		var vars []map[string]any
		s.Must(http.StatusOK, acct, http.MethodGet, path, nil).JSON(t, &vars)
		if len(vars) != 1 || vars[0]["value"] != "s********" {
			t.Errorf("%s after update: %v", slug, vars)
		}
	}
}

func TestEnvListIsSortedAndMasked(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "app"})
	values := map[string]string{
		"ZED":       "",
		"B_SHORT":   "abc",
		"A_FOUR":    "abcd",
		"LONG":      "supersecretvalue-with-a-long-tail",
		"UNICODE":   "ééééééééé",
		"DATABASE":  "postgres://u:p@h/db",
		"M1":        "12345678",
		"A_":        strings.Repeat("x", 11),
		"EMPTYLIKE": " ",
	}
	for k, v := range values {
		s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/app/env", map[string]any{"key": k, "value": v})
	}
	var vars []map[string]any
	s.Must(http.StatusOK, acct, http.MethodGet, "/api/apps/app/env", nil).JSON(t, &vars)
	want := []struct{ key, value string }{
		{"A_", "xx********"}, {"A_FOUR", "a********"}, {"B_SHORT", "********"}, {"DATABASE", "pos********"},
		{"EMPTYLIKE", "********"}, {"LONG", "sup********"}, {"M1", "12********"}, {"UNICODE", "éé********"}, {"ZED", "********"},
	}
	if len(vars) != len(want) {
		t.Fatalf("got %v", vars)
	}
	for i, w := range want {
		if vars[i]["key"] != w.key || vars[i]["value"] != w.value || len(vars[i]) != 2 {
			t.Errorf("entry %d = %v, want %s=%s", i, vars[i], w.key, w.value)
		}
	}
}

func TestEnvKeyAndValueRules(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "app"})
	put := func(body any) (int, map[string]any) {
		r := s.Do(acct, http.MethodPut, "/api/apps/app/env", body)
		if r.Status >= 500 {
			t.Fatalf("PUT %v: %d", body, r.Status)
		}
		return r.Status, r.Map(t)
	}
	for _, key := range []any{"lower", "1ABC", "_A", "A-B", "A B", "", "ÄBC", strings.Repeat("A", 257), 5, nil} {
		body := map[string]any{"value": "v"}
		if key != nil {
			body["key"] = key
		}
		if st, m := put(body); st != http.StatusBadRequest || m["error"] != "invalid_env_key" {
			t.Errorf("key %#v: %d %v", key, st, m)
		}
	}
	for _, key := range []string{"A", "A1", "A_B_C", "X9_", strings.Repeat("A", 256)} {
		if st, _ := put(map[string]any{"key": key, "value": "v"}); st != http.StatusCreated {
			t.Errorf("key %q: %d", key, st)
		}
	}
	for _, value := range []any{nil, 5, true, map[string]any{}, strings.Repeat("v", 32<<10+1), "a\x00b"} {
		body := map[string]any{"key": "OK_KEY"}
		if value != nil {
			body["value"] = value
		}
		if st, m := put(body); st != http.StatusBadRequest || m["error"] != "invalid_env_value" {
			t.Errorf("value %.20v: %d %v", value, st, m)
		}
	}
	if st, _ := put(map[string]any{"key": "BIG", "value": strings.Repeat("v", 32<<10)}); st != http.StatusCreated {
		t.Errorf("a 32 KiB value: %d", st)
	}
	for _, body := range []string{"", "{", "[]", "null"} {
		if st, m := put(body); st != http.StatusBadRequest || m["error"] != "invalid_json" {
			t.Errorf("body %q: %d %v", body, st, m)
		}
	}
}

func TestEnvDelete(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "app"})
	s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/app/env", map[string]any{"key": "GONE", "value": "v"})
	s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/app/env", map[string]any{"key": "KEPT", "value": "v"})
	if r := s.Must(http.StatusNoContent, acct, http.MethodDelete, "/api/apps/app/env/GONE", nil); len(r.Body) != 0 {
		t.Errorf("204 with a body: %s", r.Body)
	}
	for _, key := range []string{"GONE", "NEVER_SET", "lower"} {
		if r := s.Do(acct, http.MethodDelete, "/api/apps/app/env/"+key, nil); r.Status != http.StatusNotFound || r.Map(t)["error"] != "not found" {
			t.Errorf("delete %s: %d %s", key, r.Status, r.Body)
		}
	}
	var vars []map[string]any
	s.Must(http.StatusOK, acct, http.MethodGet, "/api/apps/app/env", nil).JSON(t, &vars)
	if len(vars) != 1 || vars[0]["key"] != "KEPT" {
		t.Fatalf("after delete: %v", vars)
	}
	// The same key can be set again: 201, it is a new row.
	s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/app/env", map[string]any{"key": "GONE", "value": "back"})
}
