package auth

import (
	"errors"
	"net/url"
	"testing"
	"time"
)

const (
	rfcVerifier  = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
)

func goodRequest() AuthorizeRequest {
	return AuthorizeRequest{RedirectURI: "http://127.0.0.1:8976/callback?x=1", State: "st&ate", CodeChallenge: rfcChallenge, CodeChallengeMethod: "S256"}
}

func TestAuthorize(t *testing.T) {
	c, to, err := Authorize(goodRequest(), "acc", "usr", t0)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(to)
	q := u.Query()
	if u.Host != "127.0.0.1:8976" || u.Path != "/callback" || q.Get("x") != "1" || q.Get("state") != "st&ate" {
		t.Fatalf("redirectTo %q keeps neither the URI nor the state", to)
	}
	code := q.Get("code")
	if code == "" || string(c.Hash) != string(Hash(code)) || c.ExpiresAt != t0.Add(AuthCodeLifetime) {
		t.Fatalf("code %q not kept as its hash with a short life", code)
	}

	bad := []struct {
		name string
		edit func(*AuthorizeRequest)
		want error
	}{
		{"plain method", func(r *AuthorizeRequest) { r.CodeChallengeMethod = "plain" }, ErrInvalidRequest},
		{"no method", func(r *AuthorizeRequest) { r.CodeChallengeMethod = "" }, ErrInvalidRequest},
		{"bad challenge", func(r *AuthorizeRequest) { r.CodeChallenge = "abc" }, ErrInvalidRequest},
		{"no state", func(r *AuthorizeRequest) { r.State = "" }, ErrInvalidRequest},
		{"remote redirect", func(r *AuthorizeRequest) { r.RedirectURI = "https://evil.example/cb" }, ErrInvalidRedirectURI},
	}
	for _, tc := range bad {
		r := goodRequest()
		tc.edit(&r)
		if _, _, err := Authorize(r, "acc", "usr", t0); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestAuthCodeRedeem(t *testing.T) {
	uri := goodRequest().RedirectURI
	cases := []struct {
		name     string
		verifier string
		uri      string
		at       time.Duration
		want     error
	}{
		{"good", rfcVerifier, uri, time.Second, nil},
		{"wrong verifier", "x" + rfcVerifier[1:], uri, time.Second, ErrInvalidGrant},
		{"other redirect uri", rfcVerifier, "http://127.0.0.1:9999/callback", time.Second, ErrInvalidGrant},
		{"expired", rfcVerifier, uri, AuthCodeLifetime, ErrExpiredToken},
	}
	for _, tc := range cases {
		c, _, _ := Authorize(goodRequest(), "acc", "usr", t0)
		err := c.Redeem(tc.verifier, tc.uri, t0.Add(tc.at))
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		// Every attempt spends the code.
		if err := c.Redeem(rfcVerifier, uri, t0.Add(tc.at)); !errors.Is(err, ErrInvalidGrant) {
			t.Errorf("%s: second redeem got %v, want invalid_grant", tc.name, err)
		}
	}
}

func TestMagicLinkRedeem(t *testing.T) {
	cases := []struct {
		name string
		at   time.Duration
		want error
	}{
		{"fresh", time.Minute, nil},
		{"last moment", MagicLinkLifetime - time.Millisecond, nil},
		{"expired", MagicLinkLifetime, ErrInvalidToken},
	}
	for _, tc := range cases {
		m, code := NewMagicLink("a@example.com", t0)
		if code == "" || string(m.Hash) != string(Hash(code)) {
			t.Fatal("code not kept as its hash")
		}
		if err := m.Redeem(t0.Add(tc.at)); err != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if tc.want == nil {
			if err := m.Redeem(t0.Add(tc.at)); err != ErrInvalidToken {
				t.Errorf("%s: second use got %v", tc.name, err)
			}
		}
	}
}

func TestSessionActive(t *testing.T) {
	s, tok := NewSession("acc", "usr", t0)
	if Kind(tok) != KindSession || s.ExpiresAt != t0.Add(SessionLifetime) {
		t.Fatalf("session %q expires %s", tok, s.ExpiresAt)
	}
	if !s.Active(t0.Add(SessionLifetime-time.Second)) || s.Active(t0.Add(SessionLifetime)) {
		t.Fatal("session lifetime boundary wrong")
	}
	s.RevokedAt = &t0
	if s.Active(t0) {
		t.Fatal("revoked session still active")
	}
}
