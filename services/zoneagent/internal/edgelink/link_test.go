package edgelink

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRuntime answers wakes with "inst-<app>" (apps named below answer otherwise) and dials a
// listener of the test's own for "inst-ok"; everything it was asked is recorded.
type fakeRuntime struct {
	target string
	mu     sync.Mutex
	asked  []string
}

func (f *fakeRuntime) Wake(_ context.Context, appID string) ([]string, error) {
	f.record("wake " + appID)
	switch appID {
	case "gone":
		return nil, ErrGone
	case "noweb":
		return nil, ErrNoWeb
	case "broken":
		return nil, errors.New("the sandbox would not start")
	case "none":
		return nil, nil
	case "three":
		return []string{"three/d1/9001", "three/d1/9002", "three/d1/9003"}, nil
	case "hundred":
		var ids []string
		for i := range 100 {
			ids = append(ids, fmt.Sprintf("hundred/%s/%d", strings.Repeat("d", 150), 10000+i))
		}
		return ids, nil
	case "overlong":
		return []string{strings.Repeat("x", maxInstanceID+1), "overlong/d1/9001"}, nil
	}
	return []string{"inst-" + appID}, nil
}

func (f *fakeRuntime) WakePreview(_ context.Context, appID, previewID string) ([]string, error) {
	f.record("wake " + appID + " preview " + previewID)
	if previewID == "gone00" {
		return nil, ErrGone
	}
	return []string{"inst-" + appID + "-" + previewID}, nil
}

func (f *fakeRuntime) Dial(ctx context.Context, id string) (net.Conn, error) {
	f.record("dial " + id)
	if id != "inst-ok" {
		return nil, ErrGone
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", f.target)
}

func (f *fakeRuntime) record(s string) {
	f.mu.Lock()
	f.asked = append(f.asked, s)
	f.mu.Unlock()
}

func (f *fakeRuntime) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLink serves a link on a socket of the test's own; allow decides the peer.
func startLink(t *testing.T, allow func(Peer) bool) (Client, *fakeRuntime, *logBuffer) {
	t.Helper()
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	go func() {
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from the instance"))
			c.Close()
		}
	}()
	path := filepath.Join(t.TempDir(), "run", "edge.sock")
	ln, err := Listen(path, os.Getgid())
	if err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{target: target.Addr().String()}
	logs := &logBuffer{}
	s := &Server{Runtime: rt, Allow: allow, Log: slog.New(slog.NewTextHandler(logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return Client{Path: path}, rt, logs
}

func self(p Peer) bool { return int(p.PID) == os.Getpid() && int(p.UID) == os.Getuid() }

// The two requests work: a wake names the instance, a dial passes a connected socket whose
// bytes come from the instance; a gone instance or app is ErrGone.
func TestLinkWakesAndPassesAConnection(t *testing.T) {
	c, rt, _ := startLink(t, self)
	ctx := context.Background()
	ids, err := c.Wake(ctx, "ok")
	if err != nil || len(ids) != 1 || ids[0] != "inst-ok" {
		t.Fatalf("wake: %q %v", ids, err)
	}
	conn, err := c.Dial(ctx, ids[0])
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	b, err := io.ReadAll(conn)
	conn.Close()
	if err != nil || string(b) != "hello from the instance" {
		t.Fatalf("read through the passed socket: %q %v", b, err)
	}
	if _, ok := conn.(*net.TCPConn); !ok {
		t.Fatalf("passed connection is a %T, want a TCP socket", conn)
	}
	if _, err := c.Dial(ctx, "inst-other"); !errors.Is(err, ErrGone) {
		t.Fatalf("dial of a gone instance: %v, want ErrGone", err)
	}
	if _, err := c.Wake(ctx, "gone"); !errors.Is(err, ErrGone) {
		t.Fatalf("wake of a gone app: %v, want ErrGone", err)
	}
	if got := strings.Join(rt.all(), ","); got != "wake ok,dial inst-ok,dial inst-other,wake gone" {
		t.Fatalf("the runtime was asked %s", got)
	}
}

// A peer that is not the zone's edge (another pid, another uid) is refused before anything
// is read, and the refusal is logged; the runtime is asked nothing.
func TestLinkRefusesAnotherPeer(t *testing.T) {
	for name, allow := range map[string]func(Peer) bool{
		"another pid": func(p Peer) bool { return int(p.UID) == os.Getuid() && int(p.PID) == os.Getpid()+1 },
		"another uid": func(p Peer) bool { return int(p.PID) == os.Getpid() && int(p.UID) == os.Getuid()+1 },
	} {
		t.Run(name, func(t *testing.T) {
			c, rt, logs := startLink(t, allow)
			if _, err := c.Wake(context.Background(), "ok"); err == nil {
				t.Fatal("a wake from a refused peer succeeded")
			}
			if _, err := c.Dial(context.Background(), "inst-ok"); err == nil {
				t.Fatal("a dial from a refused peer succeeded")
			}
			if asked := rt.all(); len(asked) != 0 {
				t.Fatalf("the runtime was asked %v", asked)
			}
			if !strings.Contains(logs.String(), "refused a peer") {
				t.Fatalf("no refusal logged: %s", logs.String())
			}
		})
	}
}

// Only the two kinds are served: a third kind, garbage, unknown fields and an overlong line
// are refused without asking the runtime.
func TestLinkRefusesAnythingElse(t *testing.T) {
	c, rt, logs := startLink(t, self)
	for _, line := range []string{
		`{"kind":"exec","app":"ok"}`,
		`{"kind":"wake","app":"ok","cmd":"sh"}`,
		`not json at all`,
		`{"kind":"dial"`,
		strings.Repeat("x", 4*maxLine),
	} {
		conn, err := net.Dial("unix", c.Path)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		conn.Write([]byte(line + "\n"))
		answer, _ := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		if strings.Contains(answer, "instance") {
			t.Fatalf("%.40q answered %q", line, answer)
		}
	}
	if asked := rt.all(); len(asked) != 0 {
		t.Fatalf("the runtime was asked %v", asked)
	}
	if !strings.Contains(logs.String(), "refused an unknown request") || !strings.Contains(logs.String(), "refused a malformed request") {
		t.Fatalf("refusals not logged: %s", logs.String())
	}
}

// The socket is the group's only (0660) in a folder only the owner and that group enter.
func TestLinkSocketModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "edge.sock")
	ln, err := Listen(path, os.Getgid())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for p, want := range map[string]os.FileMode{filepath.Dir(path): 0o710, path: 0o660} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Fatalf("%s: mode %o, want %o", p, got, want)
		}
	}
}

// A wake answers the app's whole list of web instances, in the runtime's order, within the
// wire's bounds: at most MaxWakeInstances (the runtime's first ones, the cut logged), an id
// the link cannot carry left out. The runtime's "no web process" travels as its own answer
// (so does a list with nothing in it), distinct from gone and from a failure.
func TestLinkWakeAnswersTheInstanceList(t *testing.T) {
	c, _, logs := startLink(t, self)
	ctx := context.Background()
	for _, tc := range []struct {
		app     string
		want    []string
		wantErr error
	}{
		{app: "three", want: []string{"three/d1/9001", "three/d1/9002", "three/d1/9003"}},
		{app: "overlong", want: []string{"overlong/d1/9001"}},
		{app: "noweb", wantErr: ErrNoWeb},
		{app: "none", wantErr: ErrNoWeb},
		{app: "gone", wantErr: ErrGone},
		{app: "broken", wantErr: ErrRefused},
	} {
		ids, err := c.Wake(ctx, tc.app)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) || ids != nil {
				t.Errorf("wake %s: %q %v, want %v", tc.app, ids, err, tc.wantErr)
			}
			for _, other := range []error{ErrNoWeb, ErrGone, ErrRefused} {
				if other != tc.wantErr && errors.Is(err, other) {
					t.Errorf("wake %s: %v is also %v", tc.app, err, other)
				}
			}
			continue
		}
		if err != nil || strings.Join(ids, ",") != strings.Join(tc.want, ",") {
			t.Errorf("wake %s: %q %v, want %q", tc.app, ids, err, tc.want)
		}
	}
	ids, err := c.Wake(ctx, "hundred")
	if err != nil || len(ids) != MaxWakeInstances || !strings.HasSuffix(ids[0], "/10000") || !strings.HasSuffix(ids[MaxWakeInstances-1], "/10063") {
		t.Fatalf("wake of 100 instances: %d ids %v, want the first %d", len(ids), err, MaxWakeInstances)
	}
	for _, want := range []string{"cut to the link's bound", "cannot carry was left out"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("not logged: %q in %s", want, logs.String())
		}
	}
}

// The edge trusts a wake's answer only within the wire's shape: more instances than the
// bound, an overlong id, an empty list or an answer past the line's bound are refused.
func TestClientRefusesAWakeAnswerOutOfBounds(t *testing.T) {
	many := make([]string, MaxWakeInstances+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"a/d/%d"`, i)
	}
	for name, tc := range map[string]struct {
		line string
		want error
	}{
		"too many":   {`{"instances":[` + strings.Join(many, ",") + `]}`, ErrRefused},
		"overlong":   {`{"instances":["` + strings.Repeat("x", maxInstanceID+1) + `"]}`, ErrRefused},
		"empty":      {`{"instances":[]}`, ErrRefused},
		"nothing":    {`{}`, ErrRefused},
		"past bound": {`{"instances":["` + strings.Repeat("x", maxAnswerLine) + `"]}`, ErrLineTooLong},
		"unknown":    {`{"instances":["a/d/1"],"exec":"sh"}`, ErrRefused},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "edge.sock")
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				bufio.NewReader(conn).ReadString('\n')
				conn.Write([]byte(tc.line + "\n"))
			}()
			ids, err := Client{Path: path}.Wake(context.Background(), "a")
			if !errors.Is(err, tc.want) || ids != nil {
				t.Fatalf("%q %v, want %v", ids, err, tc.want)
			}
		})
	}
}
