package httpapi_test

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/callerid"
)

// An upload streams with its digest sealed into the trailer (pkg/callerid): the deploy is
// made only when the body is the one signed. The same signed headers with another body, or
// a seal made for another body, are refused 401 and leave nothing behind.
func TestAnUploadIsBoundToItsSignature(t *testing.T) {
	e := newEnv(t, testPlan)
	e.addApp(e.account, "site", "static")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.app.Listener(ln) }()
	t.Cleanup(func() { _ = e.app.ShutdownWithTimeout(2 * time.Second) })
	host := ln.Addr().String()
	ct, body := multipartBody(file("index.html", strings.Repeat("a", 20000)))
	_, other := multipartBody(file("index.html", strings.Repeat("b", 20000)))

	send := func(signedBody, sentBody []byte) int {
		t.Helper()
		path := "/api/apps/site/deploys"
		h := http.Header{}
		callerid.SignBody(signingKey, h.Set, callerid.Caller{AccountID: e.account, UserID: "u", TokenKind: "session"}, "POST", host, path, time.Now(), callerid.DigestTrailer)
		sum := sha256.Sum256(signedBody)
		seal := callerid.Seal(signingKey, h.Get(callerid.HeaderSignature), sum[:])
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var b strings.Builder
		fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\nTrailer: %s\r\n%s: %d\r\n",
			path, host, ct, callerid.HeaderBodySeal, callerid.HeaderDeclaredLength, len(sentBody))
		for k, vs := range h {
			fmt.Fprintf(&b, "%s: %s\r\n", k, vs[0])
		}
		fmt.Fprintf(&b, "\r\n%x\r\n%s\r\n0\r\n%s: %s\r\n\r\n", len(sentBody), sentBody, callerid.HeaderBodySeal, seal)
		if _, err := c.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := send(body, other); status != http.StatusUnauthorized {
		t.Fatalf("another body under the signature: %d, want 401", status)
	}
	e.assertNothingBehind(0)
	if n := e.uploadSlots(); n != 0 {
		t.Fatalf("%d upload slots left by the refused upload", n)
	}
	if status := send(body, body); status != http.StatusCreated {
		t.Fatalf("the signed body: %d, want 201", status)
	}
	e.assertNothingBehind(1)
}
