package callerid

import (
	"net/http"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	key := []byte("k1")
	now := time.Unix(1_800_000_000, 0)
	caller := Caller{AccountID: "acc_1", UserID: "usr_1", TokenKind: KindSession, TokenID: "tid"}
	h := http.Header{}
	Sign(key, h.Set, caller, "GET", "/api/apps?x=1", now)

	got, err := Verify(key, h.Get, "GET", "/api/apps?x=1", now.Add(time.Second))
	if err != nil || got != caller {
		t.Fatalf("verify: %v %+v", err, got)
	}

	cases := map[string]func() (http.Header, string, string, time.Time, []byte){
		"other key": func() (http.Header, string, string, time.Time, []byte) {
			return h.Clone(), "GET", "/api/apps?x=1", now, []byte("k2")
		},
		"other path": func() (http.Header, string, string, time.Time, []byte) {
			return h.Clone(), "GET", "/api/apps/x", now, key
		},
		"other method": func() (http.Header, string, string, time.Time, []byte) {
			return h.Clone(), "DELETE", "/api/apps?x=1", now, key
		},
		"stale": func() (http.Header, string, string, time.Time, []byte) {
			return h.Clone(), "GET", "/api/apps?x=1", now.Add(MaxSkew + time.Second), key
		},
		"forged account": func() (http.Header, string, string, time.Time, []byte) {
			f := h.Clone()
			f.Set(HeaderAccount, "acc_2")
			return f, "GET", "/api/apps?x=1", now, key
		},
		"no signature": func() (http.Header, string, string, time.Time, []byte) {
			f := h.Clone()
			f.Del(HeaderSignature)
			return f, "GET", "/api/apps?x=1", now, key
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			hh, m, p, at, k := mk()
			if _, err := Verify(k, hh.Get, m, p, at); err != ErrInvalid {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
		})
	}
}
