package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/tests/e2e/harness"
)

// chromium is Debian's browser; scripts/test.sh installs it when it is missing.
const chromium = "/usr/bin/chromium"

// TestConsole drives the web console in headless Chromium (console/e2e/browser.mjs, with
// playwright-core) against a real control plane. The script asks this test, over a small
// loopback HTTP server, for what only the test can see or do: the magic link in the mail sink,
// a command-line client polling a device code, a loopback listener of the command line,
// whether a token works at the API, and how many of the user's API sessions are live (the
// page never holds its session's token: the console's server does).
func TestConsole(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("%s is missing: scripts/test.sh installs Debian's chromium (apt-get install -y chromium)", chromium)
	}
	s := defaultStack(t)
	// Sessions in Redis, as a console with replicas keeps them: the script restarts the
	// console and stays signed in.
	s.Env["CONSOLE_SESSION_STORE"] = "redis"
	s.Env["REDIS_URL"] = os.Getenv("TEST_REDIS_URL")
	if s.Env["REDIS_URL"] == "" {
		t.Fatal("TEST_REDIS_URL is not set (the Makefile exports it)")
	}
	consoleURL := s.StartConsole(t)
	ctl := newConsoleControl(t, s)

	shots := filepath.Join(harness.RepoRoot(), "tests", "e2e", "screenshots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(harness.ConsoleDir(), "e2e", "browser.mjs"))
	cmd.Dir = harness.ConsoleDir()
	cmd.Env = append(os.Environ(),
		"CONSOLE_URL="+consoleURL,
		"API_URL="+s.Gateway,
		"EDGE_URL="+s.Edge,
		"APPS_DOMAIN="+s.Env["APPS_DOMAIN"],
		"CONTROL_URL="+ctl.url,
		"CHROMIUM="+chromium,
		"SCREENSHOT_DIR="+shots,
		"EMAIL="+harness.Email("console"),
	)
	out, err := cmd.CombinedOutput()
	t.Logf("browser script:\n%s", out)
	if err != nil {
		t.Fatalf("browser script failed: %v", err)
	}
	if !strings.Contains(string(out), "console e2e: all steps passed") {
		t.Fatal("browser script ended without passing every step")
	}
	ctl.mustHaveSeen(t, "mail", "device-approved", "device-denied", "token-works", "session-revoked", "loopback", "console-restarted")
}

// consoleControl is the test's side of the browser script's questions.
type consoleControl struct {
	url  string
	s    *harness.Stack
	t    *testing.T
	mu   sync.Mutex
	seen map[string]bool

	device chan deviceResult
}

type deviceResult struct {
	Approved bool   `json:"approved"`
	Error    string `json:"error,omitempty"`
}

func newConsoleControl(t *testing.T, s *harness.Stack) *consoleControl {
	c := &consoleControl{s: s, t: t, seen: map[string]bool{}, device: make(chan deviceResult, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /mail", c.mail)
	mux.HandleFunc("POST /device", c.startDevice)
	mux.HandleFunc("GET /device/result", c.deviceResult)
	mux.HandleFunc("GET /token-works", c.tokenWorks)
	mux.HandleFunc("GET /live-sessions", c.liveSessions)
	mux.HandleFunc("POST /loopback", c.loopback)
	mux.HandleFunc("POST /restart-console", c.restartConsole)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c.url = "http://" + ln.Addr().String()
	return c
}

func (c *consoleControl) mark(step string) {
	c.mu.Lock()
	c.seen[step] = true
	c.mu.Unlock()
}

func (c *consoleControl) mustHaveSeen(t *testing.T, steps ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range steps {
		if !c.seen[st] {
			t.Errorf("the browser script never completed step %q", st)
		}
	}
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// mail answers the newest sign-in link mailed to ?email= once more than ?after= have arrived.
func (c *consoleControl) mail(w http.ResponseWriter, r *http.Request) {
	email := r.URL.Query().Get("email")
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	m, ok := c.s.SMTP.WaitFor(email, after, 20*time.Second)
	if !ok {
		reply(w, http.StatusNotFound, map[string]string{"error": "no mail reached " + email})
		return
	}
	data := strings.ReplaceAll(m.Data, "=\r\n", "")
	data = strings.ReplaceAll(data, "=3D", "=")
	i := strings.Index(data, c.s.Env["CONSOLE_URL"]+"/auth/verify?token=")
	if i < 0 {
		reply(w, http.StatusNotFound, map[string]string{"error": "the mail has no link to the console's /auth/verify"})
		return
	}
	link := data[i:]
	if j := strings.IndexAny(link, " \r\n\"<>"); j >= 0 {
		link = link[:j]
	}
	c.mark("mail")
	reply(w, http.StatusOK, map[string]string{"link": link})
}

// startDevice starts a command-line device sign-in and polls it as `tori login` would, at the
// interval, until it is approved, denied or a minute passes.
func (c *consoleControl) startDevice(w http.ResponseWriter, r *http.Request) {
	d := harness.Send(c.t, c.s.Gateway, harness.Request{Method: http.MethodPost, Path: "/api/auth/cli/device", Body: map[string]string{"clientName": "console-e2e"}})
	if d.Status != http.StatusOK {
		reply(w, http.StatusBadGateway, map[string]string{"error": string(d.Body)})
		return
	}
	var grant struct {
		DeviceCode              string `json:"deviceCode"`
		UserCode                string `json:"userCode"`
		VerificationURIComplete string `json:"verificationUriComplete"`
		Interval                int    `json:"interval"`
	}
	if err := json.Unmarshal(d.Body, &grant); err != nil {
		reply(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			time.Sleep(time.Duration(grant.Interval) * time.Second)
			tr := harness.Send(c.t, c.s.Gateway, harness.Request{Method: http.MethodPost, Path: "/api/auth/cli/token", Body: map[string]string{"deviceCode": grant.DeviceCode}})
			if tr.Status == http.StatusOK {
				var tok struct {
					Token string `json:"token"`
				}
				json.Unmarshal(tr.Body, &tok)
				if acc := c.s.Get(c.t, "/api/account", tok.Token); acc.Status != http.StatusOK || !strings.HasPrefix(tok.Token, "svc_") {
					c.device <- deviceResult{Error: "the minted token does not work: " + string(acc.Body)}
					return
				}
				c.mark("device-approved")
				c.device <- deviceResult{Approved: true}
				return
			}
			if strings.Contains(string(tr.Body), "access_denied") {
				c.mark("device-denied")
			}
			if !strings.Contains(string(tr.Body), "authorization_pending") && !strings.Contains(string(tr.Body), "slow_down") {
				c.device <- deviceResult{Error: string(tr.Body)}
				return
			}
		}
		c.device <- deviceResult{Error: "not approved within a minute"}
	}()
	reply(w, http.StatusOK, map[string]string{"userCode": grant.UserCode, "verificationUriComplete": grant.VerificationURIComplete})
}

func (c *consoleControl) deviceResult(w http.ResponseWriter, r *http.Request) {
	select {
	case res := <-c.device:
		reply(w, http.StatusOK, res)
	case <-time.After(90 * time.Second):
		reply(w, http.StatusGatewayTimeout, deviceResult{Error: "no result"})
	}
}

// tokenWorks reports whether ?token= (an API token the console showed) acts for the account.
func (c *consoleControl) tokenWorks(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	acc := c.s.Get(c.t, "/api/account", tok)
	if acc.Status == http.StatusOK && strings.HasPrefix(tok, "svc_") {
		c.mark("token-works")
	}
	reply(w, http.StatusOK, map[string]bool{"works": acc.Status == http.StatusOK})
}

// liveSessions answers how many of ?email='s API sessions are live (neither revoked nor
// expired), and of all it ever had: sign-out must leave none live.
func (c *consoleControl) liveSessions(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	conn, err := pgx.Connect(ctx, c.s.Env["DATABASE_URL"])
	if err != nil {
		reply(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	defer conn.Close(ctx)
	var live, all int
	err = conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE s.revoked_at IS NULL AND s.expires_at > now()), count(*)
		FROM identity.sessions s JOIN identity.users u ON u.id = s.user_id WHERE lower(u.email) = lower($1)`,
		r.URL.Query().Get("email")).Scan(&live, &all)
	if err != nil {
		reply(w, http.StatusInternalServerError, map[string]string{"error": fmt.Sprintf("sessions: %v", err)})
		return
	}
	if live == 0 && all > 0 {
		c.mark("session-revoked")
	}
	reply(w, http.StatusOK, map[string]int{"count": live, "all": all})
}

// restartConsole stops the console and starts it again, answering once it is ready.
func (c *consoleControl) restartConsole(w http.ResponseWriter, r *http.Request) {
	c.s.Stop("console")
	c.s.Restart("console")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(c.s.Env["CONSOLE_URL"] + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				c.mark("console-restarted")
				reply(w, http.StatusOK, map[string]bool{"restarted": true})
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	reply(w, http.StatusGatewayTimeout, map[string]string{"error": "the console did not come back"})
}

// loopback plays `tori login --web`: a listener on 127.0.0.1, and the console URL the command
// line would open. When the browser lands on the listener, the code is exchanged with the
// verifier only this side knows.
func (c *consoleControl) loopback(w http.ResponseWriter, r *http.Request) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		reply(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	verifier := "console-e2e-verifier-" + harness.Hex(24)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	state := harness.Hex(8)
	redirect := "http://" + ln.Addr().String() + "/callback"
	srv := &http.Server{}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/callback" || q.Get("state") != state || q.Get("code") == "" {
			http.Error(w, "unexpected callback", http.StatusBadRequest)
			return
		}
		tr := harness.Send(c.t, c.s.Gateway, harness.Request{Method: http.MethodPost, Path: "/api/auth/cli/token",
			Body: map[string]string{"code": q.Get("code"), "codeVerifier": verifier, "redirectUri": redirect}})
		if tr.Status != http.StatusOK {
			http.Error(w, "exchange failed: "+string(tr.Body), http.StatusBadGateway)
			return
		}
		c.mark("loopback")
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>signed in</title><p id=done>The command line is signed in.</p>"))
	})
	go srv.Serve(ln)
	c.t.Cleanup(func() { srv.Close() })
	q := url.Values{"redirectUri": {redirect}, "state": {state}, "codeChallenge": {challenge}, "codeChallengeMethod": {"S256"}}
	reply(w, http.StatusOK, map[string]string{"url": c.s.Env["CONSOLE_URL"] + "/cli/authorize?" + q.Encode()})
}
