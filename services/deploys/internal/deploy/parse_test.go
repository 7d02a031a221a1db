package deploy

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseImage(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"ghcr.io/acme/web@sha256:" + digest, true},
		{"registry.example.com:5000/a/b/c@sha256:" + digest, true},
		{"docker.io/library/nginx@sha256:" + digest, true},
		{"nginx@sha256:" + digest, false},                             // no registry
		{"ghcr.io/acme/web:latest", false},                            // tag, not digest
		{"ghcr.io/acme/web@sha256:" + strings.ToUpper(digest), false}, // uppercase hex
		{"ghcr.io/acme/web@sha256:" + digest[:63], false},             // short digest
		{"ghcr.io/acme/web@sha256:" + digest + "0", false},            // long digest
		{"ghcr.io/acme/web@sha512:" + digest, false},                  // other algorithm
		{"ghcr.io/ac me/web@sha256:" + digest, false},                 // whitespace
		{"ghcr.io/acme/web@x@sha256:" + digest, false},                // two @
		{"", false},
	} {
		_, err := ParseImage(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseImage(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidImage) {
			t.Errorf("ParseImage(%q): %v is not ErrInvalidImage", tc.in, err)
		}
	}
}

func TestParseRelease(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want []string
		ok   bool
	}{
		{``, nil, true},
		{`null`, nil, true},
		{`["bin/migrate", "--yes"]`, []string{"bin/migrate", "--yes"}, true},
		{`"bin/migrate  --yes\tnow"`, []string{"bin/migrate", "--yes", "now"}, true},
		{`"sh -c 'a b'"`, []string{"sh", "-c", "'a", "b'"}, true}, // no quoting, as the contract says
		{`"   "`, nil, true},
		{`[]`, nil, true},
		{`["", "x"]`, nil, false},
		{`42`, nil, false},
		{`{"cmd": "x"}`, nil, false},
		{`["a\u0000b"]`, nil, false},
	} {
		got, err := ParseRelease(json.RawMessage(tc.raw))
		if (err == nil) != tc.ok {
			t.Errorf("ParseRelease(%s): err %v, want ok=%v", tc.raw, err, tc.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrInvalidRelease) {
			t.Errorf("ParseRelease(%s): %v is not ErrInvalidRelease", tc.raw, err)
		}
		if tc.ok && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseRelease(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"index.html", true},
		{"assets/app.js", true},
		{"a/b/c/d.txt", true},
		{"..hidden/file", true}, // a name that starts with dots is not a parent reference
		{"../etc/passwd", false},
		{"a/../../b", false},
		{"a/..", false},
		{"/index.html", false},
		{`assets\app.js`, false},
		{"a\x00b", false},
		{"", false},
		{"a//b", false},
		{"./a", false},
		{strings.Repeat("a", 1025), false},
	} {
		_, err := CleanPath(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("CleanPath(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidPath) {
			t.Errorf("CleanPath(%q): %v is not ErrInvalidPath", tc.in, err)
		}
	}
}

func TestDispositionParamsKeepFolders(t *testing.T) {
	for _, tc := range []struct {
		header, field, name string
		has                 bool
	}{
		{`form-data; name="files"; filename="assets/app.js"`, "files", "assets/app.js", true},
		{`form-data; name="files"; filename="a\b.js"`, "files", `a\b.js`, true},
		{`form-data; name="files"; filename="say \"hi\".txt"`, "files", `say "hi".txt`, true},
		{`form-data; name=files; filename=x/y.txt`, "files", "x/y.txt", true},
		{`form-data; name="release"`, "release", "", false},
		{`form-data; filename="../../x"; name="files"`, "files", "../../x", true},
	} {
		field, name, has := DispositionParams(tc.header)
		if field != tc.field || name != tc.name || has != tc.has {
			t.Errorf("DispositionParams(%s) = %q %q %v", tc.header, field, name, has)
		}
	}
}
