package edge

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestEdgeConnectionsPerAddressAreCapped(t *testing.T) {
	const max = 3
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	go func() { _ = srv.Serve(LimitPerIP(ln, max)) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()

	get := func(c net.Conn) (int, error) {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n"); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	var open []net.Conn
	t.Cleanup(func() {
		for _, c := range open {
			c.Close()
		}
	})
	for i := range max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		if code, err := get(c); err != nil || code != 200 {
			t.Fatalf("connection %d of %d: %d %v", i+1, max, code, err)
		}
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if code, err := get(extra); err == nil && code != http.StatusTooManyRequests {
		t.Fatalf("connection %d answered %d, want 429 or a close", max+1, code)
	}

	// A closed connection frees its place (the server notices the close asynchronously).
	open[0].Close()
	open = open[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if code, err := get(c); err == nil && code == 200 {
			open = append(open, c)
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("a freed place was never reused")
		}
	}
}

func TestEdgeServerHasEveryTimeout(t *testing.T) {
	s := NewServer(http.NotFoundHandler())
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Fatalf("edge server timeouts: header %v read %v write %v idle %v", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
}
