package testinfra

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Pebble is a running Pebble, Let's Encrypt's ACME test server, behind a proxy of the test's
// that counts the orders placed.
type Pebble struct {
	// Directory is the ACME directory URL (ZONE_ACME_CA).
	Directory string
	// APIRootFile is the PEM file of the root Pebble's own HTTPS API is served under
	// (ZONE_ACME_CA_ROOT).
	APIRootFile string
	// Roots trust the certificates Pebble issues.
	Roots  *x509.CertPool
	orders atomic.Int32
	// challtest is pebble-challtestsrv's management address (validating Pebbles only).
	challtest string
}

// SetA makes the challenge test server's DNS answer host with ip (a loopback address): a
// name pointed where no edge listens fails validation, as a customer's mistyped record would.
func (p *Pebble) SetA(t testing.TB, host, ip string) {
	t.Helper()
	p.challtestPost(t, "/add-a", map[string]any{"host": host, "addresses": []string{ip}})
}

// SetTXT publishes a TXT record at the challenge test server's DNS (a DNS-01 hook's stand-in
// uses ChalltestURL instead, from its own process).
func (p *Pebble) SetTXT(t testing.TB, host, value string) {
	t.Helper()
	p.challtestPost(t, "/set-txt", map[string]any{"host": host, "value": value})
}

// ChalltestURL is the challenge test server's management API (http://host:port), for a
// process of the test's that changes its records.
func (p *Pebble) ChalltestURL() string { return "http://" + p.challtest }

func (p *Pebble) challtestPost(t testing.TB, path string, body map[string]any) {
	t.Helper()
	if p.challtest == "" {
		t.Fatal("this Pebble validates nothing: start it with StartPebbleValidating")
	}
	b, _ := json.Marshal(body)
	resp, err := http.Post(p.ChalltestURL()+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("pebble-challtestsrv %s: %s", path, resp.Status)
	}
}

// Orders is how many new orders clients have placed.
func (p *Pebble) Orders() int { return int(p.orders.Load()) }

// StartPebble runs Pebble (built once by scripts/pebble-build.sh and named by PEBBLE_BIN) on
// free ports until the test ends. Challenges are taken as valid without being checked
// (PEBBLE_VA_ALWAYS_VALID): no test resolver points Pebble at the edge. Certificates live for
// validity. Without PEBBLE_BIN the test fails: the ACME path must never pass by being skipped.
func StartPebble(t testing.TB, validity time.Duration) *Pebble {
	t.Helper()
	return startPebble(t, validity, 0, 0)
}

// StartPebbleValidating is StartPebble with challenges checked for real: Pebble's validation
// asks pebble-challtestsrv (beside PEBBLE_BIN) for every name's address, which answers
// 127.0.0.1, and connects there on httpPort (HTTP-01) and tlsPort (TLS-ALPN-01): the edge's
// listeners under test.
func StartPebbleValidating(t testing.TB, validity time.Duration, httpPort, tlsPort int) *Pebble {
	t.Helper()
	return startPebble(t, validity, httpPort, tlsPort)
}

func startPebble(t testing.TB, validity time.Duration, httpPort, tlsPort int) *Pebble {
	t.Helper()
	bin := os.Getenv("PEBBLE_BIN")
	if bin == "" {
		t.Fatal("PEBBLE_BIN is not set: build Pebble once with scripts/pebble-build.sh and run the tests with PEBBLE_BIN=$(scripts/pebble-build.sh)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("PEBBLE_BIN=%s: %v; run scripts/pebble-build.sh", bin, err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "api.pem"), filepath.Join(dir, "api.key")
	apiCert := writeLoopbackCert(t, certFile, keyFile)
	listen, mgmt := FreeAddr(t), FreeAddr(t)
	conf := map[string]any{"pebble": map[string]any{
		"listenAddress": listen, "managementListenAddress": mgmt,
		"certificate": certFile, "privateKey": keyFile,
		"httpPort": max(httpPort, 5002), "tlsPort": max(tlsPort, 5001), "ocspResponderURL": "",
		"externalAccountBindingRequired": false,
		"retryAfter":                     map[string]int{"authz": 1, "order": 1},
		"keyAlgorithm":                   "ecdsa",
		"profiles": map[string]any{"default": map[string]any{
			"description": "the test's", "validityPeriod": int(validity.Seconds()),
		}},
	}}
	confFile := filepath.Join(dir, "pebble.json")
	b, _ := json.Marshal(conf)
	if err := os.WriteFile(confFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "pebble.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	args := []string{"-config", confFile}
	var challtest string
	env := append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	if httpPort == 0 {
		env = append(env, "PEBBLE_VA_ALWAYS_VALID=1")
	} else {
		dns := FreeAddr(t)
		challtest = FreeAddr(t)
		runUntilCleanup(t, filepath.Join(filepath.Dir(bin), "pebble-challtestsrv"), nil, logf,
			"-dnsserver", dns, "-management", challtest, "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
			"-http01", "", "-https01", "", "-tlsalpn01", "", "-doh", "")
		args = append(args, "-dnsserver", dns)
	}
	exited := runUntilCleanup(t, bin, env, logf, args...)
	apiRoots := x509.NewCertPool()
	apiRoots.AddCert(apiCert.Leaf)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: apiRoots}}}
	var rootPEM []byte
	awaitUp(t, "pebble", exited, logf, 60*time.Second, func() bool {
		resp, err := client.Get("https://" + mgmt + "/roots/0")
		if err != nil {
			return false
		}
		rootPEM, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	p := &Pebble{APIRootFile: certFile, Roots: x509.NewCertPool(), challtest: challtest}
	if !p.Roots.AppendCertsFromPEM(rootPEM) {
		t.Fatalf("pebble's root is not PEM: %q", rootPEM)
	}
	// The proxy keeps the Host it is asked under, so the URLs Pebble hands out point at it.
	target, _ := url.Parse("https://" + listen)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			if r.In.Method == http.MethodPost && strings.HasSuffix(r.In.URL.Path, "/order-plz") {
				p.orders.Add(1)
			}
		},
		Transport: client.Transport,
	}
	ln, err := tls.Listen("tcp", FreeAddr(t), &tls.Config{Certificates: []tls.Certificate{apiCert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	p.Directory = fmt.Sprintf("https://%s/dir", ln.Addr())
	return p
}

// writeLoopbackCert writes a self-signed certificate for 127.0.0.1 and localhost.
func writeLoopbackCert(t testing.TB, certFile, keyFile string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "pebble api (test)"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}
