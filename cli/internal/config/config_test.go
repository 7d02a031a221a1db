package config

import (
	"os"
	"path/filepath"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSaveIsOwnerOnlyAndRoundTrips(t *testing.T) {
	dir := t.TempDir()
	path, err := Path(env(map[string]string{"XDG_CONFIG_HOME": dir}))
	if err != nil || path != filepath.Join(dir, "tori", "config.json") {
		t.Fatalf("path %q err %v", path, err)
	}
	// An older file left readable by others is tightened by the next save.
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(`{"token":"old"}`), 0o644)
	want := File{Token: "svc_secret", TokenID: "t1", APIURL: "http://example.test"}
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v err %v, want 0600", st.Mode().Perm(), err)
	}
	got, err := Load(path)
	if err != nil || got != want {
		t.Fatalf("loaded %+v err %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("left behind %v", entries)
	}
}

func TestResolveOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tori", "config.json")
	if err := Save(path, File{Token: "svc_file", TokenID: "id1", APIURL: "http://file.test/"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name           string
		env            map[string]string
		token, id, url string
		fromEnv        bool
	}{
		{"file", map[string]string{"XDG_CONFIG_HOME": dir}, "svc_file", "id1", "http://file.test", false},
		{"env token", map[string]string{"XDG_CONFIG_HOME": dir, "TORI_TOKEN": "svc_env"}, "svc_env", "", "http://file.test", true},
		{"env url", map[string]string{"XDG_CONFIG_HOME": dir, "TORI_API_URL": "http://env.test"}, "svc_file", "id1", "http://env.test", false},
		{"no file", map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, "", "", DefaultAPIURL, false},
		{"home fallback", map[string]string{"HOME": dir + "/h"}, "", "", DefaultAPIURL, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if s.Token != tc.token || s.TokenID != tc.id || s.APIURL != tc.url || s.TokenFromEnv != tc.fromEnv {
				t.Fatalf("got %+v", s)
			}
		})
	}
}

func TestBrokenFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte("{"), 0o600)
	if _, err := Load(path); err == nil {
		t.Fatal("no error for a broken file")
	}
}
