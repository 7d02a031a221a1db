package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/services/gateway/internal/httpapi"
)

// trickle sends a request whose body arrives one byte per gap, and returns the first response
// line the gateway sent, if any, with the number of body bytes it managed to write.
func trickle(t *testing.T, h *harness, head string, body string, gap time.Duration) (string, int) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for i := range len(body) {
		time.Sleep(gap)
		if _, err := conn.Write([]byte{body[i]}); err != nil {
			break
		}
		sent++
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return line, sent
}

func TestATrickledJSONBodyIsCutOff(t *testing.T) {
	h := start(t, options{timeouts: httpapi.Timeouts{Body: 300 * time.Millisecond}})
	body := `{"name":"slowloris-has-all-day"}`
	head := "POST /api/apps?status=201 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer svc_alice\r\n" +
		"Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	// 50 ms a byte: the whole body would take 1.6 s, past the 300 ms body timeout.
	line, sent := trickle(t, h, head, body, 50*time.Millisecond)
	if sent == len(body) && strings.Contains(line, " 201 ") {
		t.Fatalf("a body trickled over %d bytes past the timeout was served: %q", sent, line)
	}
	if strings.Contains(line, " 200 ") || strings.Contains(line, " 201 ") {
		t.Fatalf("the trickled request was answered %q", line)
	}
	if n := h.up.acted.Load(); n != 0 {
		t.Fatalf("the service answered %d action(s) from a trickled body", n)
	}

	// The same body sent promptly is forwarded: the cut is the timeout, not the route.
	r := h.do(http.MethodPost, "/api/apps?status=201", "svc_alice", strings.NewReader(body), "Content-Type", "application/json")
	expect(t, r, http.StatusCreated, "")
}

func TestAnUploadKeepsItsLongerTimeout(t *testing.T) {
	h := start(t, options{timeouts: httpapi.Timeouts{Body: 200 * time.Millisecond}})
	body := "--xyz\r\nContent-Disposition: form-data; name=\"archive\"\r\n\r\nzz\r\n--xyz--\r\n"
	head := "POST /api/apps/site/deploys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer svc_alice\r\n" +
		"Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	// 10 ms a byte: about 0.7 s in all, past the JSON body timeout but well within an upload's.
	line, sent := trickle(t, h, head, body, 10*time.Millisecond)
	if sent != len(body) || !strings.Contains(line, " 201 ") {
		t.Fatalf("a slow upload was cut: sent %d of %d, answer %q", sent, len(body), line)
	}
}

func TestConnectionsPerAddressAreCapped(t *testing.T) {
	const max = 4
	h := start(t, options{maxConns: max})
	addr := strings.TrimPrefix(h.url, "http://")

	var open []net.Conn
	t.Cleanup(func() {
		for _, c := range open {
			_ = c.Close()
		}
	})
	// max connections, each proven accepted by serving a request on it.
	for i := range max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d of %d: %v", i+1, max, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d of %d: status %d", i+1, max, resp.StatusCode)
		}
	}

	// One more from the same address is refused.
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(extra, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("connection %d: status %d, want 429", max+1, resp.StatusCode)
		}
	}

	// Closing one frees its place.
	_ = open[0].Close()
	open = open[1:]
	var again *http.Response
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		again, err = http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && again.StatusCode == http.StatusOK {
			again.Body.Close()
			open = append(open, c)
			break
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatal("a freed place was never reused")
		}
	}
}
