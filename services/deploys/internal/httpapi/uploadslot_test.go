package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/callerid"
)

// An upload holds one of the plan's concurrent deploys from its first byte: while one is
// still streaming, a second is refused 429 deploy_limit_reached before its body is read (the
// server has its first kilobytes, no more). Once the first becomes a deploy, its slot is the deploy's.
func TestUploadsCountFromTheirFirstByte(t *testing.T) {
	plan := testPlan
	plan.ConcurrentDeploys = 1
	e := newEnv(t, plan)
	e.addApp(e.account, "site", "static")
	e.addApp(e.account, "site2", "static")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.app.Listener(ln) }()
	t.Cleanup(func() { _ = e.app.ShutdownWithTimeout(2 * time.Second) })
	host := ln.Addr().String()

	ct, body := multipartBody(file("index.html", strings.Repeat("x", 40000)))
	first, firstReader := rawUpload(t, e, host, "site", ct, int64(len(body)))
	if _, err := first.Write(body[:16<<10]); err != nil {
		t.Fatal(err)
	}
	// The first upload is under way once its slot is held.
	deadline := time.Now().Add(10 * time.Second)
	for e.uploadSlots() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the first upload holds no slot")
		}
		time.Sleep(10 * time.Millisecond)
	}

	second, secondReader := rawUpload(t, e, host, "site2", ct, int64(len(body)))
	defer second.Close()
	// The server hands a handler the body after its first few kilobytes (fasthttp's
	// streaming); the rest, 24 KiB here, is never sent.
	if _, err := second.Write(body[:16<<10]); err != nil {
		t.Fatal(err)
	}
	_ = second.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(secondReader, nil)
	if err != nil {
		t.Fatalf("the second upload got no answer before sending its body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second upload while the first streams: %d, want 429", resp.StatusCode)
	}

	if _, err := first.Write(body[16<<10:]); err != nil {
		t.Fatal(err)
	}
	_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err = http.ReadResponse(firstReader, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	first.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("first upload: %d", resp.StatusCode)
	}
	if n := e.uploadSlots(); n != 0 {
		t.Fatalf("%d upload slots left after the deploy was made", n)
	}
	e.assertNothingBehind(1)
}

// rawUpload opens a connection and sends an upload's headers only, signed as e.account.
func rawUpload(t *testing.T, e *env, host, slug, contentType string, length int64) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/apps/" + slug + "/deploys"
	h := http.Header{}
	signAs(h, e.account, "POST", host, path)
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n", path, host, contentType, length)
	for k, vs := range h {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// uploadSlots counts the upload slots held.
func (e *env) uploadSlots() int {
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM uploads`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func signAs(h http.Header, account, method, host, path string) {
	callerid.Sign(signingKey, h.Set, callerid.Caller{AccountID: account, UserID: "u", TokenKind: "session"}, method, host, path, time.Now())
}
