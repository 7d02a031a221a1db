package e2e

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// defaultStack is the shape most tests share: the auth buckets are large, because every test
// here signs in from 127.0.0.1; the bucket itself is tested on a stack of its own.
func defaultStack(t *testing.T) *harness.Stack {
	return harness.Start(t, harness.Options{Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000"}})
}

// errorBody decodes a contract error body.
type errorBody struct {
	Error             string `json:"error"`
	Code              string `json:"code"`
	Message           string `json:"message"`
	Limit             *int64 `json:"limit"`
	Plan              string `json:"plan"`
	RetryAfter        *int   `json:"retryAfter"`
	RetryAfterSeconds *int   `json:"retryAfterSeconds"`
}

func expectError(t *testing.T, r *harness.Response, status int, word string) errorBody {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var e errorBody
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", r.Body)
	}
	if e.Error != word {
		t.Fatalf("error %q, want %q: %s", e.Error, word, r.Body)
	}
	return e
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func expectKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keysOf(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s has keys %v, want %v", what, got, want)
	}
}

func noRateLimitHeaders(t *testing.T, r *harness.Response) {
	t.Helper()
	for k := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit") {
			t.Fatalf("response carries %s", k)
		}
	}
}

func post(s *harness.Stack, t testing.TB, path, token string, body any) *harness.Response {
	t.Helper()
	return s.Do(t, harness.Request{Method: http.MethodPost, Path: path, Token: token, Body: body})
}
