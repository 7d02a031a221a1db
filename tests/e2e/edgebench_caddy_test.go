package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// caddySite is one site block of the Caddyfile: its name and what serves it.
type caddySite struct{ host, directives string }

// startCaddy runs Caddy on addr with one block per site, over https when certFile is set (the
// certificate and key for every site's name), plain http otherwise. No admin endpoint, no
// automatic HTTPS (no ACME, no redirects), no access log: the edge it stands for does none
// of these on the request path either. It stops when the benchmark ends.
func startCaddy(b *testing.B, bin, addr, certFile, keyFile string, sites []caddySite) {
	b.Helper()
	dir := b.TempDir()
	_, port, _ := strings.Cut(addr, ":")
	scheme, tlsLine := "http", ""
	if certFile != "" {
		scheme, tlsLine = "https", fmt.Sprintf("\ttls %s %s\n", certFile, keyFile)
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "{\n\tadmin off\n\tpersist_config off\n\tauto_https off\n\tstorage file_system %s\n}\n", filepath.Join(dir, "storage"))
	for _, s := range sites {
		fmt.Fprintf(&conf, "\n%s://%s:%s {\n\tbind 127.0.0.1\n%s\t%s\n}\n", scheme, s.host, port, tlsLine, s.directives)
	}
	file := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(file, []byte(conf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	startBenchProcess(b, "caddy", exec.Command(bin, "run", "--config", file, "--adapter", "caddyfile"), dir,
		"HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
}

// startBenchProcess runs cmd (Caddy, the plain app) with env plus PATH, its output in
// dir/<name>.log, until the benchmark ends; a process that exits early is shown with its log.
func startBenchProcess(b *testing.B, name string, cmd *exec.Cmd, dir string, env ...string) {
	b.Helper()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", name, err)
	}
	logf.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	b.Cleanup(func() {
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			b.Errorf("%s exited before the benchmark ended; its log:\n%s", name, out[max(0, len(out)-3000):])
		default:
			cmd.Process.Kill()
			<-exited
		}
	})
}

// signLeaf makes a certificate for names, signed by the zone's local root (DATA_DIR/tls's
// root.pem and root.key, the CA the edge's own certificates come from), with an ECDSA P-256
// key as the edge's are. Caddy serves it, so both edges present a chain to the same root.
func signLeaf(b *testing.B, tlsDir, outDir string, names ...string) (certFile, keyFile string) {
	b.Helper()
	rootPEM, err1 := os.ReadFile(filepath.Join(tlsDir, "root.pem"))
	keyPEM, err2 := os.ReadFile(filepath.Join(tlsDir, "root.key"))
	if err1 != nil || err2 != nil {
		b.Fatalf("the zone's local root: %v %v", err1, err2)
	}
	rb, _ := pem.Decode(rootPEM)
	kb, _ := pem.Decode(keyPEM)
	if rb == nil || kb == nil {
		b.Fatal("the zone's root.pem or root.key is not PEM")
	}
	root, err := x509.ParseCertificate(rb.Bytes)
	if err != nil {
		b.Fatal(err)
	}
	rootKey, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		b.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, root, &key.PublicKey, rootKey)
	if err != nil {
		b.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		b.Fatal(err)
	}
	certFile, keyFile = filepath.Join(outDir, "leaf.pem"), filepath.Join(outDir, "leaf.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		b.Fatal(err)
	}
	return certFile, keyFile
}
