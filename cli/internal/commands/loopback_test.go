package commands

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoginWebExchangesTheLoopbackCodeWithItsVerifier(t *testing.T) {
	var challenge string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/auth/cli/token":
			var in struct{ Code, CodeVerifier, RedirectURI string }
			json.NewDecoder(r.Body).Decode(&in)
			sum := sha256.Sum256([]byte(in.CodeVerifier))
			if in.Code != "the-code" || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge || !strings.HasPrefix(in.RedirectURI, "http://127.0.0.1:") {
				w.WriteHeader(400)
				w.Write([]byte(`{"error":"invalid_grant"}`))
				return
			}
			w.Write([]byte(`{"token":"svc_web","tokenId":"tid"}`))
		case "/api/account":
			if r.Header.Get("Authorization") != "Bearer svc_web" {
				w.WriteHeader(401)
				return
			}
			w.Write([]byte(`{"user":{"email":"ada@example.test"},"plan":"nestling"}`))
		}
	}))
	defer srv.Close()
	cfg := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": cfg, "TORI_API_URL": srv.URL, "TORI_CONSOLE_URL": "http://console.test"}
	stdin, _ := io.Pipe() // nobody pastes
	errR, errW := io.Pipe()
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), Env{Stdin: stdin, Stdout: &out, Stderr: errW, Getenv: func(k string) string { return env[k] }}, []string{"login", "--web"})
		errW.Close()
	}()
	sc := bufio.NewScanner(errR)
	var authorize *url.URL
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Open "); ok {
			authorize, _ = url.Parse(rest)
			break
		}
	}
	go io.Copy(io.Discard, errR)
	if authorize == nil || authorize.Host != "console.test" || authorize.Path != "/cli/authorize" {
		t.Fatalf("authorize URL %v", authorize)
	}
	q := authorize.Query()
	challenge = q.Get("codeChallenge")
	if q.Get("codeChallengeMethod") != "S256" || len(challenge) != 43 || q.Get("state") == "" {
		t.Fatalf("authorize query %v", q)
	}
	// The console would now redirect the browser here.
	back := q.Get("redirectUri") + "?" + url.Values{"code": {"the-code"}, "state": {q.Get("state")}}.Encode()
	resp, err := http.Get(back)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("callback: %v %v", resp, err)
	}
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(out.String(), "ada@example.test") {
			t.Fatalf("exit %d out %q", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("login --web did not finish")
	}
	b, _ := os.ReadFile(filepath.Join(cfg, "tori", "config.json"))
	if !strings.Contains(string(b), `"token": "svc_web"`) || !strings.Contains(string(b), `"tokenId": "tid"`) {
		t.Fatalf("config %s", b)
	}
}
