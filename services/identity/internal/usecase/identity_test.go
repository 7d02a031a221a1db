package usecase_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/callerid"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/usecase"
)

// A sign-in link goes to any well-formed address (answered alike whether it has an account),
// at most five to one address per 15 minutes with the rest answered as if sent; a malformed
// address is refused, and a mail server that is down is said so, never with the link.
func TestRequestMagicLink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(*world)
		email    string
		wantErr  error
		wantSent int // mails sent by the request under test
	}{
		{name: "a new address", email: "Ada@Example.com", wantSent: 1},
		{name: "an address with an account", email: "ada@example.com", wantSent: 1,
			setup: func(w *world) { w.signIn("ada@example.com") }},
		{name: "a malformed address", email: "ada.example.com", wantErr: account.ErrInvalidEmail},
		{name: "the sixth in 15 minutes", email: "ada@example.com", wantSent: 0, setup: func(w *world) {
			for range auth.MagicLinksPerWindow {
				if err := w.svc.RequestMagicLink(context.Background(), "ada@example.com"); err != nil {
					w.t.Fatal(err)
				}
				w.now = w.now.Add(time.Minute)
			}
		}},
		{name: "once the window passed", email: "ada@example.com", wantSent: 1, setup: func(w *world) {
			for range auth.MagicLinksPerWindow {
				if err := w.svc.RequestMagicLink(context.Background(), "ada@example.com"); err != nil {
					w.t.Fatal(err)
				}
			}
			w.now = w.now.Add(auth.MagicLinkWindow + time.Second)
		}},
		{name: "the mail server down", email: "ada@example.com", wantErr: usecase.ErrMailUnavailable,
			setup: func(w *world) { w.mail.down = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.setup != nil {
				tc.setup(w)
			}
			before := len(w.mail.sent)
			err := w.svc.RequestMagicLink(context.Background(), tc.email)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				if strings.Contains(err.Error(), "token=") {
					t.Fatalf("the error carries the link: %v", err)
				}
				return
			}
			if got := len(w.mail.sent) - before; got != tc.wantSent {
				t.Fatalf("%d mails sent, want %d", got, tc.wantSent)
			}
			if tc.wantSent > 0 {
				if to := w.mail.sent[len(w.mail.sent)-1].To; to != "ada@example.com" {
					t.Fatalf("mailed to %q, want the normalised address", to)
				}
			}
		})
	}
}

// A link's code signs in once, within 15 minutes: the first sign-in of an address creates its
// account (and says so once), a later one finds it; a used, expired, unknown or empty code
// is auth.ErrInvalidToken.
func TestVerifyMagicLink(t *testing.T) {
	for _, tc := range []struct {
		name string
		// code mails a link (after whatever history the case needs) and returns the code
		// to redeem.
		code    func(*world) string
		wantErr error
		// wantCreated: the sign-in creates the account (identity.account.created).
		wantCreated bool
	}{
		{name: "a first sign-in", wantCreated: true, code: mailed},
		{name: "a later sign-in", code: func(w *world) string {
			w.signIn("ada@example.com")
			w.keys()
			return mailed(w)
		}},
		{name: "a minute before it expires", wantCreated: true, code: func(w *world) string {
			c := mailed(w)
			w.now = w.now.Add(auth.MagicLinkLifetime - time.Minute)
			return c
		}},
		{name: "an expired code", wantErr: auth.ErrInvalidToken, code: func(w *world) string {
			c := mailed(w)
			w.now = w.now.Add(auth.MagicLinkLifetime)
			return c
		}},
		{name: "a used code", wantErr: auth.ErrInvalidToken, code: func(w *world) string {
			c := mailed(w)
			if _, err := w.svc.VerifyMagicLink(context.Background(), c); err != nil {
				w.t.Fatal(err)
			}
			w.keys()
			return c
		}},
		{name: "an unknown code", wantErr: auth.ErrInvalidToken, code: func(w *world) string { mailed(w); return "not-a-code" }},
		{name: "no code", wantErr: auth.ErrInvalidToken, code: func(*world) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			code := tc.code(w)
			accounts := len(w.m.accounts)
			in, err := w.svc.VerifyMagicLink(context.Background(), code)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if len(w.m.accounts) != accounts || len(w.keys()) != 0 {
					t.Fatal("a refused code created an account or published")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if auth.Kind(in.Token) != auth.KindSession || !in.Session.ExpiresAt.Equal(w.now.Add(auth.SessionLifetime)) ||
				in.User.Email != "ada@example.com" || in.Session.AccountID != in.User.AccountID {
				t.Fatalf("sign-in %+v", in)
			}
			var want []string
			if tc.wantCreated {
				want = []string{identitybus.KeyAccountCreated, identitybus.KeyTeamCreated}
			}
			if got := w.keys(); !slices.Equal(got, want) {
				t.Fatalf("published %v, want %v", got, want)
			}
			if len(w.m.users) != 1 {
				t.Fatalf("%d users for one address", len(w.m.users))
			}
			if p, err := w.svc.Introspect(context.Background(), in.Token); err != nil || p.AccountID != in.User.AccountID {
				t.Fatalf("the new session introspects as %+v, %v", p, err)
			}
		})
	}
}

// mailed mails a sign-in link to ada@example.com and returns its code.
func mailed(w *world) string {
	w.t.Helper()
	if err := w.svc.RequestMagicLink(context.Background(), "ada@example.com"); err != nil {
		w.t.Fatal(err)
	}
	return w.lastCode()
}

// Only a session mints an API token, named 1 to 100 characters, at most 100 active per account
// (the refusal names the plan); the token acts for its account until revoked, and a revoke
// is announced to every gateway. Another account's, an unknown or a revoked token is not
// found.
func TestAPITokens(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	session, _ := w.signIn("ada@example.com")
	stranger, _ := w.signIn("eve@example.com")
	w.keys()

	for _, tc := range []struct {
		name    string
		caller  callerid.Caller
		label   string
		wantErr error
	}{
		{"an API token minting another", callerid.Caller{AccountID: session.AccountID, UserID: session.UserID, TokenKind: callerid.KindAPI, TokenID: "t"}, "ci", auth.ErrSessionRequired},
		{"an empty name", session, "  ", auth.ErrInvalidName},
		{"a name of 101 characters", session, strings.Repeat("n", 101), auth.ErrInvalidName},
	} {
		if _, _, err := w.svc.CreateToken(ctx, tc.caller, tc.label); !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
		}
	}

	tok, secret, err := w.svc.CreateToken(ctx, session, " ci ")
	if err != nil || tok.Name != "ci" || auth.Kind(secret) != auth.KindAPI {
		t.Fatalf("minted %+v (%q), %v", tok, secret, err)
	}
	p, err := w.svc.Introspect(ctx, secret)
	if err != nil || p.AccountID != session.AccountID || p.Kind != auth.KindAPI || p.TokenID != tok.ID {
		t.Fatalf("the token introspects as %+v, %v", p, err)
	}

	for _, id := range []string{"not-a-uuid", "01936b2e-1f6a-7c3d-9e4f-0a1b2c3d4e5f"} {
		if err := w.svc.RevokeToken(ctx, session, id); !errors.Is(err, auth.ErrNotFound) {
			t.Fatalf("revoking %q: %v, want auth.ErrNotFound", id, err)
		}
	}
	if err := w.svc.RevokeToken(ctx, stranger, tok.ID); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("another account revoking it: %v, want auth.ErrNotFound", err)
	}
	if got := w.keys(); len(got) != 0 {
		t.Fatalf("refused revokes published %v", got)
	}
	if err := w.svc.RevokeToken(ctx, session, tok.ID); err != nil {
		t.Fatal(err)
	}
	if got := w.keys(); !slices.Equal(got, []string{identitybus.KeyTokenRevoked}) {
		t.Fatalf("published %v, want the revocation", got)
	}
	if _, err := w.svc.Introspect(ctx, secret); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("a revoked token introspects: %v", err)
	}
	if err := w.svc.RevokeToken(ctx, session, tok.ID); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("revoking it again: %v, want auth.ErrNotFound", err)
	}

	// The cap counts active tokens: the revoked one does not.
	for i := range auth.MaxAPITokens {
		if _, _, err := w.svc.CreateToken(ctx, session, "t"); err != nil {
			t.Fatalf("token %d: %v", i+1, err)
		}
	}
	var limit *auth.TokenLimitError
	if _, _, err := w.svc.CreateToken(ctx, session, "one more"); !errors.As(err, &limit) || limit.Limit != auth.MaxAPITokens || limit.Plan != "nestling" {
		t.Fatalf("past the cap: %v, want a TokenLimitError naming nestling", err)
	}
	if _, _, err := w.svc.CreateToken(ctx, stranger, "t"); err != nil {
		t.Fatalf("another account's cap is its own: %v", err)
	}
}

// A session acts for its account for 30 days, until logged out; logging out is a session's
// alone, announced to every gateway once. Anything else presented is unauthorized.
func TestSessionsAndLogout(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	session, token := w.signIn("ada@example.com")
	w.keys()

	for _, bad := range []string{"", "tok_unknown", "svc_unknown", "Bearer " + token, "garbage"} {
		if _, err := w.svc.Introspect(ctx, bad); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("introspect %q: %v, want auth.ErrUnauthorized", bad, err)
		}
	}
	signedIn := w.now
	w.now = signedIn.Add(auth.SessionLifetime - time.Second)
	if p, err := w.svc.Introspect(ctx, token); err != nil || p.Kind != auth.KindSession || p.TokenID != session.TokenID {
		t.Fatalf("a second before it expires: %+v, %v", p, err)
	}
	w.now = signedIn.Add(auth.SessionLifetime)
	if _, err := w.svc.Introspect(ctx, token); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("an expired session: %v, want auth.ErrUnauthorized", err)
	}

	w.now = signedIn
	api := session
	api.TokenKind = callerid.KindAPI
	if err := w.svc.Logout(ctx, api); !errors.Is(err, auth.ErrSessionRequired) {
		t.Fatalf("an API token logging out: %v, want auth.ErrSessionRequired", err)
	}
	if err := w.svc.Logout(ctx, session); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Introspect(ctx, token); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("a logged-out session: %v, want auth.ErrUnauthorized", err)
	}
	if err := w.svc.Logout(ctx, session); err != nil {
		t.Fatal(err)
	}
	if got := w.keys(); !slices.Equal(got, []string{identitybus.KeyTokenRevoked}) {
		t.Fatalf("published %v, want one revocation", got)
	}
}

// The command-line sign-in: the device polls while pending (slow_down when faster than its
// interval), only a session approves, and the API token is issued once.
func TestDeviceSignIn(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	session, _ := w.signIn("ada@example.com")
	start, err := w.svc.StartDevice(ctx, "")
	if err != nil || start.VerificationURIComplete != "https://console.tori.test/device?user_code="+start.UserCode {
		t.Fatalf("start %+v, %v", start, err)
	}
	interval := time.Duration(start.Interval) * time.Second
	poll := func(after time.Duration, want error) usecase.IssuedToken {
		t.Helper()
		w.now = w.now.Add(after)
		got, err := w.svc.ExchangeDeviceCode(ctx, start.DeviceCode)
		if !errors.Is(err, want) {
			t.Fatalf("poll: %v, want %v", err, want)
		}
		return got
	}

	poll(interval, auth.ErrAuthorizationPending)
	poll(time.Second, auth.ErrSlowDown)
	if _, err := w.svc.ExchangeDeviceCode(ctx, "unknown"); !errors.Is(err, auth.ErrUnknownCode) {
		t.Fatalf("an unknown device code: %v", err)
	}
	api := session
	api.TokenKind = callerid.KindAPI
	if err := w.svc.ApproveDevice(ctx, api, start.UserCode); !errors.Is(err, auth.ErrSessionRequired) {
		t.Fatalf("an API token approving: %v, want auth.ErrSessionRequired", err)
	}
	poll(2*interval, auth.ErrAuthorizationPending)
	if err := w.svc.ApproveDevice(ctx, session, start.UserCode); err != nil {
		t.Fatal(err)
	}
	issued := poll(2*interval, nil)
	if p, err := w.svc.Introspect(ctx, issued.Token); err != nil || p.AccountID != session.AccountID || p.TokenID != issued.TokenID {
		t.Fatalf("the issued token introspects as %+v, %v", p, err)
	}
	poll(2*interval, auth.ErrAccessDenied)
}
