package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"tori.dev/tests/e2e/harness"
)

// fakeContainerRuntime builds FakeContainerRuntime (services/zoneagent/internal/imageruntime/
// fakeruntime), the named test stand-in for docker/podman, which cannot run on this
// machine, and returns its path and its state folder (named in <binary>.state: the zone
// runs the CLI with a fixed environment).
func fakeContainerRuntime(t *testing.T) (string, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "docker")
	cmd := exec.Command("go", "build", "-o", bin, "./internal/imageruntime/fakeruntime")
	cmd.Dir = filepath.Join(harness.RepoRoot(), "services", "zoneagent")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the fake container runtime: %v\n%s", err, out)
	}
	state := t.TempDir()
	if err := os.WriteFile(bin+".state", []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	return bin, state
}

// testRegistry serves go-containerregistry's in-process registry with TLS on loopback
// (no registry runs on this machine) under the name registry.test, which DNS never
// resolves: the zone is told, through its tests-only settings, to resolve that one name to
// 127.0.0.1 and to trust the certificate. It returns the zone's settings and a function
// that pushes a small image and returns its reference by digest.
func testRegistry(t *testing.T) (map[string]string, func() string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"registry.test"}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "registry.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	addr := srv.Listener.Addr().String()
	push := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}
	_, port, _ := net.SplitHostPort(addr)
	repo := "registry.test:" + port + "/acme/web"
	n := 0
	return map[string]string{"ZONE_TEST_REGISTRY_HOST": "registry.test", "ZONE_TEST_REGISTRY_CA": ca}, func() string {
		t.Helper()
		n++
		layer, err := random.Layer(256, "application/vnd.docker.image.rootfs.diff.tar.gzip")
		if err != nil {
			t.Fatal(err)
		}
		img, err := mutate.AppendLayers(empty.Image, layer)
		if err != nil {
			t.Fatal(err)
		}
		tag, err := name.NewTag(repo + ":v" + strconv.Itoa(n))
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(tag, img, remote.WithTransport(push)); err != nil {
			t.Fatalf("push: %v", err)
		}
		digest, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return repo + "@" + digest.String()
	}
}

// loaded is the name the zone loads an image under in the runtime: its digest alone.
func loaded(image string) string {
	_, digest, _ := strings.Cut(image, "@sha256:")
	return "tori.invalid/image:" + digest
}

// An image deploy through the gateway goes live in a container (through the real CLI
// adapter, driving the fake engine) with the app's environment, never on a command line; a
// failing release Job leaves it serving.
func TestImageDeployThroughTheFakeRuntime(t *testing.T) {
	bin, state := fakeContainerRuntime(t)
	env, push := testRegistry(t)
	env["AUTH_LIMIT_PER_15MIN"], env["ZONE_IMAGE_RUNTIME"] = "100000", bin
	s := harness.Start(t, harness.Options{Env: env})
	a := s.NewAccount(t, "image")
	slug := createApp(t, s, a.Token, "service")
	const value = "image-env-secret-value"
	if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token, Body: map[string]string{"key": "API_TOKEN", "value": value}}); r.Status != http.StatusCreated {
		t.Fatalf("env: %d %s", r.Status, r.Body)
	}
	deployImage := func(image string, release []string) string {
		t.Helper()
		body := map[string]any{"image": image}
		if release != nil {
			body["release"] = release
		}
		r := s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: a.Token, Body: body})
		if r.Status != http.StatusCreated {
			t.Fatalf("image deploy: %d %s", r.Status, r.Body)
		}
		return r.Map(t)["id"].(string)
	}

	good := push()
	goodID := deployImage(good, []string{"/bin/sh", "-c", "echo migrating"})
	waitStatus(t, s, a.Token, slug, goodID, "live")
	harness.Eventually(t, 30*time.Second, "the edge to proxy to the container", func() bool {
		status, body := edgeGet(t, s, slug, "/")
		return status == http.StatusOK && strings.HasPrefix(body, "image="+loaded(good)+" ") && strings.Contains(body, "API_TOKEN")
	})

	bad := push()
	failed := waitStatus(t, s, a.Token, slug, deployImage(bad, []string{"/bin/sh", "-c", "exit 3"}), "failed")
	if failed["error"] != "release_failed" {
		t.Fatalf("failing release: %v", failed)
	}
	if _, body := edgeGet(t, s, slug, "/"); !strings.HasPrefix(body, "image="+loaded(good)+" ") {
		t.Fatalf("the previous revision stopped serving: %q", body)
	}

	// A crashed agent leaves its container running; the restarted one keeps only what a live
	// route names and serves the live revision again.
	s.Kill("zoneagent")
	s.Restart("zoneagent")
	harness.Eventually(t, 30*time.Second, "the live container to be back", func() bool {
		_, body := edgeGet(t, s, slug, "/")
		return strings.HasPrefix(body, "image="+loaded(good)+" ")
	})
	if got, _ := filepath.Glob(filepath.Join(state, "containers", "*.pid")); len(got) != 1 || filepath.Base(got[0]) != "tori-"+goodID+".pid" {
		t.Fatalf("containers after the restart: %v", got)
	}

	// No environment value ever reached the runtime's command line.
	f, err := os.Open(filepath.Join(state, "argv.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var argv []string
		json.Unmarshal(sc.Bytes(), &argv)
		if strings.Contains(strings.Join(argv, " "), value) {
			t.Fatalf("an environment value on a command line: %q", argv)
		}
		if len(argv) > 0 && argv[0] == "run" {
			runs++
		}
	}
	if runs != 4 { // the good deploy's Job and service, the bad deploy's Job, the service again after the restart
		t.Fatalf("%d run commands", runs)
	}
}
