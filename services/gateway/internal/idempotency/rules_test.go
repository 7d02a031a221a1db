package idempotency

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	h := []byte("hash-a")
	cases := []struct {
		name   string
		rec    Record
		req    []byte
		want   Verdict
		hashed bool // whether the request's body had to be read
	}{
		{"running: refused without reading the body", Record{Running: true}, h, InProgress, false},
		{"running, another body: still in progress", Record{Running: true, RequestHash: []byte("x")}, []byte("y"), InProgress, false},
		{"done, same request: replay", Record{RequestHash: h, Status: 201}, h, Replay, true},
		{"done, same request, 4xx: replay", Record{RequestHash: h, Status: 422}, h, Replay, true},
		{"done, another request: reused", Record{RequestHash: h, Status: 201}, []byte("hash-b"), Reused, true},
		{"done, not kept, same request: not kept", Record{RequestHash: h, TooLarge: true}, h, NotKept, true},
		{"done, not kept, another request: reused", Record{RequestHash: h, TooLarge: true}, []byte("hash-b"), Reused, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hashed := false
			v, err := Judge(tc.rec, func() ([]byte, error) { hashed = true; return tc.req, nil })
			if err != nil || v != tc.want || hashed != tc.hashed {
				t.Fatalf("verdict %v err %v hashed %v; want %v hashed %v", v, err, hashed, tc.want, tc.hashed)
			}
		})
	}
	boom := errors.New("body unreadable")
	if _, err := Judge(Record{RequestHash: h}, func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

func TestKeep(t *testing.T) {
	cases := []struct {
		status            int
		request, response bool
		want              bool
	}{
		{200, true, true, true},
		{201, true, true, true},
		{204, true, true, true},
		{400, true, true, true},
		{404, true, true, true},
		{409, true, true, true},
		{413, true, true, true},
		{429, true, true, false}, // "not now": the retry after Retry-After must be able to act
		{302, true, true, false},
		{500, true, true, false},
		{502, true, true, false},
		{503, true, true, false},
		{201, false, true, false}, // the service answered before the whole body passed
		{201, true, false, false}, // the answer broke off
		{0, true, true, false},
	}
	for _, tc := range cases {
		if got := Keep(tc.status, tc.request, tc.response); got != tc.want {
			t.Errorf("Keep(%d, %v, %v) = %v", tc.status, tc.request, tc.response, got)
		}
	}
}

func TestValidKey(t *testing.T) {
	for key, want := range map[string]bool{
		"":                         false,
		"a":                        true,
		"0190c2d4-7b8e-7c3a-9f1e":  true,
		strings.Repeat("k", 255):   true,
		strings.Repeat("k", 256):   false,
		"tab\there":                false,
		"caf\u00e9":                false,
		"spaces and ~punctuation!": true,
	} {
		if ValidKey(key) != want {
			t.Errorf("ValidKey(%q) != %v", key, want)
		}
	}
}

func TestKeysAreScopedAndHashed(t *testing.T) {
	a, b := KeyHash("account:a", "k1"), KeyHash("account:b", "k1")
	if bytes.Equal(a, b) {
		t.Fatal("two accounts share a key")
	}
	if bytes.Equal(KeyHash("address:1.2.3.4", "k1"), KeyHash("address:1.2.3.5", "k1")) {
		t.Fatal("two addresses share a key")
	}
	// The separator keeps "ab"+"c" and "a"+"bc" apart.
	if bytes.Equal(KeyHash("ab", "c"), KeyHash("a", "bc")) {
		t.Fatal("scope and key run together")
	}
	if len(a) != 32 || bytes.Contains(a, []byte("k1")) {
		t.Fatal("not a SHA-256")
	}
}

func TestFingerprintCoversMethodTargetAndBody(t *testing.T) {
	sum := func(method, target, body string) []byte {
		f := NewFingerprint(method, target)
		for _, part := range strings.SplitAfter(body, ",") { // in pieces, as a body streams
			_, _ = f.Write([]byte(part))
		}
		return f.Sum()
	}
	base := sum("POST", "/api/apps", `{"name":"a","kind":"static"}`)
	if !bytes.Equal(base, sum("POST", "/api/apps", `{"name":"a","kind":"static"}`)) {
		t.Fatal("same request, different hash")
	}
	for _, other := range [][]byte{
		sum("POST", "/api/apps", `{"name":"b","kind":"static"}`),
		sum("POST", "/api/apps?x=1", `{"name":"a","kind":"static"}`),
		sum("POST", "/api/tokens", `{"name":"a","kind":"static"}`),
		sum("PUT", "/api/apps", `{"name":"a","kind":"static"}`),
	} {
		if bytes.Equal(base, other) {
			t.Fatal("different requests, same hash")
		}
	}
}
