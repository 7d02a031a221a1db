package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
	"tori.dev/pkg/testinfra"
)

// Response is a finished response with its body read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response is not JSON (%d): %s", r.Status, r.Body)
	}
}

// Map decodes a JSON object body.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Request is one request to the gateway.
type Request struct {
	Method  string
	Path    string
	Token   string
	Body    any // marshalled as JSON unless []byte or io.Reader
	Header  map[string]string
	Timeout time.Duration
}

var client = &http.Client{Timeout: 60 * time.Second}

// Do sends req to the gateway.
func (s *Stack) Do(t testing.TB, req Request) *Response {
	t.Helper()
	return Send(t, s.Gateway, req)
}

// Send sends req to any base URL.
func Send(t testing.TB, base string, req Request) *Response {
	t.Helper()
	var body io.Reader
	switch b := req.Body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = strings.NewReader(b)
	case io.Reader:
		body = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(req.Method, base+req.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	if req.Body != nil {
		if _, raw := req.Body.(io.Reader); !raw {
			hr.Header.Set("Content-Type", "application/json")
		}
	}
	if req.Token != "" {
		hr.Header.Set("Authorization", "Bearer "+req.Token)
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	resp, err := client.Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.Path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Get is a GET with a token.
func (s *Stack) Get(t testing.TB, path, token string) *Response {
	t.Helper()
	return s.Do(t, Request{Method: http.MethodGet, Path: path, Token: token})
}

var linkCode = regexp.MustCompile(`/auth/verify\?token=([A-Za-z0-9_\-]+)`)

// MagicCode asks for a magic link for email and returns the code from the mail.
func (s *Stack) MagicCode(t testing.TB, email string) string {
	t.Helper()
	before := s.SMTP.Count(email)
	r := s.Do(t, Request{Method: http.MethodPost, Path: "/api/auth/magic-link", Body: map[string]string{"email": email}})
	if r.Status != http.StatusAccepted {
		t.Fatalf("magic-link: %d %s", r.Status, r.Body)
	}
	m, ok := s.SMTP.WaitFor(email, before, 10*time.Second)
	if !ok {
		t.Fatalf("no mail reached %s", email)
	}
	// Quoted-printable soft line breaks may split the link.
	data := strings.ReplaceAll(m.Data, "=\r\n", "")
	match := linkCode.FindStringSubmatch(data)
	if match == nil {
		t.Fatalf("no verify link in mail: %q", m.Data)
	}
	return match[1]
}

// Account is a signed-in customer.
type Account struct {
	Email     string
	Token     string // session token (tok_…)
	UserID    string
	AccountID string
}

// SignIn creates (or signs in) the account of email by magic link and returns its session.
func (s *Stack) SignIn(t testing.TB, email string) Account {
	t.Helper()
	code := s.MagicCode(t, email)
	r := s.Do(t, Request{Method: http.MethodPost, Path: "/api/auth/magic-link/verify", Body: map[string]string{"token": code}})
	if r.Status != http.StatusOK {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	var v struct {
		Token string `json:"token"`
		User  struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	r.JSON(t, &v)
	acc := Account{Email: email, Token: v.Token, UserID: v.User.ID}
	return acc
}

// NewAccount signs in a fresh account.
func (s *Stack) NewAccount(t testing.TB, prefix string) Account {
	t.Helper()
	return s.SignIn(t, Email(prefix))
}

// Eventually retries check until it returns true or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() bool) {
	t.Helper()
	testinfra.Eventually(t, timeout, what, check)
}
