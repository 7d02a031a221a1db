package callerid

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
	"unsafe"

	"github.com/gofiber/fiber/v2"
)

const host = "127.0.0.1:8103"

func TestSignVerify(t *testing.T) {
	key := []byte("k1")
	now := time.Unix(1_800_000_000, 0)
	caller := Caller{AccountID: "acc_1", UserID: "usr_1", TokenKind: KindSession, TokenID: "tid"}
	h := http.Header{}
	Sign(key, h.Set, caller, "GET", host, "/api/apps?x=1", now)

	got, err := Verify(key, h.Get, "GET", host, "/api/apps?x=1", now.Add(time.Second))
	if err != nil || got != caller {
		t.Fatalf("verify: %v %+v", err, got)
	}
	if _, err := Verify(key, h.Get, "GET", host, "/api/apps?x=1", now.Add(MaxSkew)); err != nil {
		t.Fatalf("at the window's edge: %v", err)
	}

	type req struct {
		h                  http.Header
		method, host, path string
		at                 time.Time
		key                []byte
	}
	ok := func() req { return req{h.Clone(), "GET", host, "/api/apps?x=1", now, key} }
	cases := map[string]func() req{
		"other key":    func() req { r := ok(); r.key = []byte("k2"); return r },
		"other path":   func() req { r := ok(); r.path = "/api/apps/x"; return r },
		"other method": func() req { r := ok(); r.method = "DELETE"; return r },
		"other host":   func() req { r := ok(); r.host = "127.0.0.1:8104"; return r },
		"stale":        func() req { r := ok(); r.at = now.Add(MaxSkew + time.Second); return r },
		"from the future": func() req {
			r := ok()
			r.at = now.Add(-MaxSkew - time.Second)
			return r
		},
		"forged account": func() req { r := ok(); r.h.Set(HeaderAccount, "acc_2"); return r },
		"other nonce": func() req {
			r := ok()
			r.h.Set(HeaderNonce, "00000000000000000000000000000000")
			return r
		},
		"no nonce":     func() req { r := ok(); r.h.Del(HeaderNonce); return r },
		"no signature": func() req { r := ok(); r.h.Del(HeaderSignature); return r },
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			r := mk()
			if _, err := Verify(r.key, r.h.Get, r.method, r.host, r.path, r.at); err != ErrInvalid {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
		})
	}
}

func TestEachSignatureHasItsOwnNonce(t *testing.T) {
	a, b := http.Header{}, http.Header{}
	now := time.Now()
	Sign([]byte("k"), a.Set, Caller{}, "GET", host, "/", now)
	Sign([]byte("k"), b.Set, Caller{}, "GET", host, "/", now)
	if a.Get(HeaderNonce) == b.Get(HeaderNonce) || a.Get(HeaderSignature) == b.Get(HeaderSignature) {
		t.Fatal("two signatures of the same request are alike")
	}
}

func TestNoncesAreClaimedOnceForTheWindow(t *testing.T) {
	n := NewNonces(3)
	t0 := time.Unix(1_800_000_000, 0)
	if n.Claim("a", t0, t0) != nil || n.Claim("a", t0, t0.Add(time.Second)) != ErrReplay {
		t.Fatal("a nonce was accepted twice")
	}
	// Still remembered while a signature made at t0 could verify...
	if n.Claim("a", t0, t0.Add(MaxSkew)) != ErrReplay {
		t.Fatal("forgotten inside the window")
	}
	// ...and forgotten after, when Verify refuses the signature anyway.
	if n.Claim("b", t0.Add(MaxSkew+time.Second), t0.Add(MaxSkew+time.Second)) != nil || n.Len() != 1 {
		t.Fatalf("after the window: %d remembered, want 1", n.Len())
	}
	// A signature dated ahead (clocks apart) is kept until it too is stale.
	ahead := t0.Add(20 * time.Second)
	if n.Claim("c", ahead, t0.Add(11*time.Second)) != nil || n.Claim("c", ahead, ahead.Add(MaxSkew)) != ErrReplay {
		t.Fatal("a nonce signed ahead was forgotten while it could verify")
	}
}

func TestNoncesRefuseWhenFull(t *testing.T) {
	n := NewNonces(2)
	t0 := time.Unix(1_800_000_000, 0)
	if n.Claim("a", t0, t0) != nil || n.Claim("b", t0, t0) != nil {
		t.Fatal("under the bound was refused")
	}
	if err := n.Claim("c", t0, t0); err != ErrNoncesFull {
		t.Fatalf("a third nonce past a bound of 2: %v, want ErrNoncesFull", err)
	}
	later := t0.Add(MaxSkew + time.Second)
	if n.Claim("c", later, later) != nil {
		t.Fatal("room never came back after the window")
	}
}

// A service behind the Middleware serves a signed request once; the same bytes sent again,
// within the window, are refused.
func TestMiddlewareRefusesAReplayedRequest(t *testing.T) {
	key := []byte("test-signing-key-0123456789")
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Post("/api/things", Middleware(key, true, fiber.ErrUnauthorized), func(c *fiber.Ctx) error {
		return c.SendString(From(c).AccountID)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	target := ln.Addr().String()

	signed := http.Header{}
	Sign(key, signed.Set, Caller{AccountID: "acct-1", UserID: "u", TokenKind: KindAPI, TokenID: "t"}, "POST", target, "/api/things", time.Now())
	send := func(h http.Header, host string) (int, string) {
		req, _ := http.NewRequest("POST", "http://"+target+"/api/things", nil)
		req.Header = h.Clone()
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := send(signed, target); code != 200 || body != "acct-1" {
		t.Fatalf("first: %d %s", code, body)
	}
	if code, _ := send(signed, target); code != 401 {
		t.Fatalf("replay: %d, want 401", code)
	}

	// A signature made for another service's host:port is refused here, even fresh.
	other := http.Header{}
	Sign(key, other.Set, Caller{AccountID: "acct-1"}, "POST", "127.0.0.1:1", "/api/things", time.Now())
	if code, _ := send(other, target); code != 401 {
		t.Fatalf("signed for another host: %d, want 401", code)
	}
	// And a fresh signature for this host is served: the refusals were the replay and the host.
	fresh := http.Header{}
	Sign(key, fresh.Set, Caller{AccountID: "acct-1"}, "POST", target, "/api/things", time.Now())
	if code, _ := send(fresh, target); code != 200 {
		t.Fatalf("fresh: %d", code)
	}
}

func TestVerifyOnceTellsAReplay(t *testing.T) {
	key := []byte("k")
	now := time.Unix(1_800_000_000, 0)
	h := http.Header{}
	Sign(key, h.Set, Caller{}, "GET", host, "/", now)
	seen := NewNonces(0)
	if _, err := VerifyOnce(key, seen, h.Get, "GET", host, "/", now); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyOnce(key, seen, h.Get, "GET", host, "/", now); !errors.Is(err, ErrReplay) {
		t.Fatalf("second: %v, want ErrReplay", err)
	}
}

// A server may hand Claim a string backed by a header buffer it reuses for the next request
// (fasthttp does): the remembered nonce must not change with the buffer.
func TestNoncesKeepTheirOwnCopy(t *testing.T) {
	n := NewNonces(0)
	now := time.Now()
	buf := []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	if n.Claim(unsafe.String(&buf[0], len(buf)), now, now) != nil {
		t.Fatal("first claim refused")
	}
	copy(buf, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb") // the buffer now holds the next request's nonce
	if n.Claim("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", now, now) != nil {
		t.Fatal("a fresh nonce looked seen: the stored key aliased the reused buffer")
	}
	if n.Claim("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", now, now) == nil {
		t.Fatal("the first nonce was forgotten")
	}
}
