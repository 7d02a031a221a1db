package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// silentListener accepts connections and never answers on them (nor reads past the kernel's
// buffers), the way a hung server or a black-holing proxy behaves.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

func timeoutClient(base string, timeout time.Duration) *Client {
	return &Client{BaseURL: base, HTTP: NewHTTPClient(timeout), Timeout: timeout}
}

// A request that sees no answer fails after the timeout, naming the request, instead of
// waiting forever.
func TestNoAnswerFailsWithTheURL(t *testing.T) {
	base := silentListener(t)
	c := timeoutClient(base, 300*time.Millisecond)
	_, _, err := c.ListApps(context.Background(), "")
	var te *TransportError
	if !errors.As(err, &te) || !te.TimedOut {
		t.Fatalf("err %T %v, want a timed-out TransportError", err, err)
	}
	for _, want := range []string{"GET " + base + "/api/apps", "no answer", "300ms", "TORI_API_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// An upload the other side stops reading fails once it has made no progress for the
// timeout; one that keeps moving may take far longer than the timeout in all.
func TestUploadsAreBoundedByProgressNotTotalTime(t *testing.T) {
	const timeout = 400 * time.Millisecond
	t.Run("stalled", func(t *testing.T) {
		base := silentListener(t)
		c := timeoutClient(base, timeout)
		// Far more than the socket buffers hold, so the writer blocks once they are full.
		body := bytes.Repeat([]byte("x"), 64<<20)
		up := &Upload{ContentType: "application/octet-stream", Length: int64(len(body)), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(body)), nil
		}}
		_, _, err := c.Upload(context.Background(), "site", up)
		var te *TransportError
		if !errors.As(err, &te) || !te.TimedOut || !strings.Contains(err.Error(), "POST "+base+"/api/apps/site/deploys") {
			t.Fatalf("err %v, want a timed-out upload naming the request", err)
		}
	})
	t.Run("slow but moving", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n, _ := io.Copy(io.Discard, r.Body); n != 10 {
				w.WriteHeader(400)
				return
			}
			w.WriteHeader(201)
			w.Write([]byte(`{"id":"d1","status":"building"}`))
		}))
		defer srv.Close()
		c := timeoutClient(srv.URL, timeout)
		// Ten chunks a quarter of the timeout apart: 2.5 × the timeout in all.
		up := &Upload{ContentType: "application/octet-stream", Length: 10, Open: func() (io.ReadCloser, error) {
			return io.NopCloser(&tricklingReader{left: 10, every: timeout / 4}), nil
		}}
		d, _, err := c.Upload(context.Background(), "site", up)
		if err != nil || d.ID != "d1" {
			t.Fatalf("a slow upload that keeps moving: %+v %v", d, err)
		}
	})
}

// An answer whose body stops half-way fails the same way.
func TestStalledAnswerFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(200)
		w.Write([]byte(`[{"slug":`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := timeoutClient(srv.URL, 300*time.Millisecond)
	_, _, err := c.ListApps(context.Background(), "")
	var te *TransportError
	if !errors.As(err, &te) || !te.TimedOut {
		t.Fatalf("err %v, want a timed-out TransportError", err)
	}
	srv.CloseClientConnections()
}

// Nothing listening: a transport error naming the request at once, not a timeout.
func TestRefusedConnectionNamesTheURL(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	base := "http://" + ln.Addr().String()
	ln.Close()
	_, _, err := timeoutClient(base, time.Second).GetApp(context.Background(), "x")
	var te *TransportError
	if !errors.As(err, &te) || te.TimedOut || !strings.Contains(err.Error(), "GET "+base+"/api/apps/x") {
		t.Fatalf("err %v", err)
	}
}

// The caller giving up (Ctrl-C) is the caller's context error, not the API's failure.
func TestCancelIsTheCallersError(t *testing.T) {
	base := silentListener(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, _, err := timeoutClient(base, 10*time.Second).ListApps(ctx, "")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

type tricklingReader struct {
	left  int
	every time.Duration
}

func (r *tricklingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.every)
	p[0] = 'x'
	r.left--
	return 1, nil
}
