package keyringtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// VaultServer is a `vault server -dev` of the test's own, with transit enabled.
type VaultServer struct {
	Addr  string // http://127.0.0.1:port
	Token string // root token
	bin   string
	home  string
}

// StartVault runs the binary VAULT_BIN names as a dev server on a free port with a random
// root token, and enables the transit engine the way an operator would. Without VAULT_BIN
// the test fails: the Vault path must never pass by being skipped.
func StartVault(t testing.TB) *VaultServer {
	t.Helper()
	bin := os.Getenv("VAULT_BIN")
	if bin == "" {
		t.Fatal("VAULT_BIN is not set: build Vault once with scripts/vault-dev-build.sh and run the tests with VAULT_BIN=$(scripts/vault-dev-build.sh)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("VAULT_BIN=%s: %v; run scripts/vault-dev-build.sh", bin, err)
	}
	tok := make([]byte, 16)
	rand.Read(tok)
	s := &VaultServer{Token: "root-" + hex.EncodeToString(tok), bin: bin, home: t.TempDir()}
	addr := freeAddr(t)
	s.Addr = "http://" + addr

	cmd := exec.Command(bin, "server", "-dev", "-dev-root-token-id="+s.Token, "-dev-listen-address="+addr)
	// HOME points at a temporary folder: the dev server writes the root token to ~/.vault-token.
	cmd.Env = s.env()
	logf, err := os.CreateTemp(s.home, "vault-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start vault: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.Addr + "/v1/sys/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("vault dev server did not become healthy: %v\n%s", err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.CLI(t, "secrets", "enable", "transit")
	return s
}

func (s *VaultServer) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.home, "VAULT_ADDR=" + s.Addr, "VAULT_TOKEN=" + s.Token}
}

// CLI runs the vault command against this server, as an operator would.
func (s *VaultServer) CLI(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("vault %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// CreateKey makes a derived transit key, as the README tells operators to.
func (s *VaultServer) CreateKey(t testing.TB, name string) {
	t.Helper()
	s.CLI(t, "write", "-f", fmt.Sprintf("transit/keys/%s", name), "derived=true")
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
