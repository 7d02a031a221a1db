package supervisor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/uuid"

	"tori.dev/pkg/netguard"
	"tori.dev/services/zoneagent/internal/imageruntime"
)

// testRegistryName is the registry the image tests pull from: go-containerregistry's
// in-process registry, served with TLS on loopback (no registry runs on this machine), its
// name resolved by testResolver alone. .test never resolves in DNS.
const testRegistryName = "registry.test"

// testResolver stands in for DNS: the names it is given, and "no such host" for the rest.
type testResolver map[string]string

func (r testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

var (
	sharedRegistryOnce sync.Once
	sharedRegistry     *httptest.Server
	sharedRegistryErr  error
)

// testRegistry is the package's in-process registry, started once.
func testRegistry() *httptest.Server {
	sharedRegistryOnce.Do(func() {
		sharedRegistry, sharedRegistryErr = tlsServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	})
	if sharedRegistryErr != nil {
		panic("start the test registry: " + sharedRegistryErr.Error())
	}
	return sharedRegistry
}

// testRegistryHost is <name>:<port> of the test registry, as image references name it.
func testRegistryHost() string {
	_, port, _ := net.SplitHostPort(testRegistry().Listener.Addr().String())
	return testRegistryName + ":" + port
}

func testRegistryRoots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(testRegistry().Certificate())
	return pool
}

// strictTestPuller pulls through the zone's default deny list; only the name is the test's.
func strictTestPuller() imageruntime.RegistryPuller {
	return imageruntime.RegistryPuller{Resolver: testResolver{testRegistryName: "127.0.0.1"}, RootCAs: testRegistryRoots()}
}

// relaxedTestPuller lets the test registry's loopback address through, for that name only:
// the image tests' way to prove the pull and load work.
func relaxedTestPuller() imageruntime.RegistryPuller {
	p := strictTestPuller()
	p.Allow = func(host string, a netip.Addr) bool { return host == testRegistryName && a.IsLoopback() }
	return p
}

// pushTestImage pushes a small image labelled with seed (and behaviour, when not empty) and
// returns its reference by digest.
func pushTestImage(seed, behaviour string) string {
	layer, err := random.Layer(256, "application/vnd.docker.image.rootfs.diff.tar.gzip")
	if err != nil {
		panic(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		panic(err)
	}
	labels := map[string]string{"tori.test/seed": seed}
	if behaviour != "" {
		labels["tori.test/behaviour"] = behaviour
	}
	if img, err = mutate.Config(img, v1.Config{Labels: labels}); err != nil {
		panic(err)
	}
	repo := testRegistryHost() + "/shop"
	tag, err := name.NewTag(repo + ":" + strings.ReplaceAll(uuid.NewString(), "-", ""))
	if err != nil {
		panic(err)
	}
	if err := remote.Write(tag, img, remote.WithTransport(testRegistry().Client().Transport)); err != nil {
		panic("push a test image: " + err.Error())
	}
	digest, err := img.Digest()
	if err != nil {
		panic(err)
	}
	return repo + "@" + digest.String()
}

// A registry whose name resolves to loopback is refused by the zone's pull, though the
// registry answers there (the relaxed pull below gets the image): nothing is loaded.
func TestImagePullRefusesARegistryResolvingToLoopback(t *testing.T) {
	eng := newFakeEngine(t)
	image := pushTestImage("strict", "")
	strict := eng.cli
	strict.Registry = strictTestPuller()
	err := strict.Pull(context.Background(), image, io.Discard)
	if !errors.Is(err, netguard.ErrNotPublic) || !strings.Contains(err.Error(), "a loopback address") {
		t.Fatalf("pull from a loopback registry: %v", err)
	}
	if loads := eng.callsStarting("load"); len(loads) != 0 {
		t.Fatalf("something was loaded: %q", loads)
	}
	// The control: the same pull with the deny list relaxed for the test registry works.
	if err := eng.cli.Pull(context.Background(), image, io.Discard); err != nil {
		t.Fatalf("relaxed pull: %v", err)
	}
	if loads := eng.callsStarting("load", "-i"); len(loads) != 1 {
		t.Fatalf("loads: %q", loads)
	}
	if len(eng.callsStarting("pull")) != 0 {
		t.Fatal("the engine was asked to pull")
	}
}

// A registry that redirects its blobs to a host resolving to a private or link-local
// address gets no connection there: the dialer checks every connection, not the first.
func TestImagePullRefusesARedirectToAPrivateHost(t *testing.T) {
	eng := newFakeEngine(t)
	image := pushTestImage("redirect", "")
	front, err := registryTLSWith(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/blobs/") {
				http.Redirect(w, r, "https://blobs.test:8443"+r.URL.Path, http.StatusTemporaryRedirect)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	for _, private := range []string{"10.0.0.7", "169.254.169.254", "100.64.0.9", "127.0.0.1"} {
		t.Run(private, func(t *testing.T) {
			cli := eng.cli
			cli.Registry = imageruntime.RegistryPuller{
				Resolver: testResolver{testRegistryName: "127.0.0.1", "blobs.test": private},
				RootCAs:  front.roots,
				// Relaxed for the registry's own name alone: the blob host gets the default list.
				Allow: func(host string, a netip.Addr) bool { return host == testRegistryName && a.IsLoopback() },
			}
			ref := strings.Replace(image, testRegistryHost(), front.host, 1)
			err := cli.Pull(context.Background(), ref, io.Discard)
			if !errors.Is(err, netguard.ErrNotPublic) {
				t.Fatalf("a redirect to %s: %v", private, err)
			}
		})
	}
	if loads := eng.callsStarting("load"); len(loads) != 0 {
		t.Fatalf("something was loaded: %q", loads)
	}
}

// Plain http is never spoken to a registry, even to a name go-containerregistry takes for
// a local one (it falls back to http for those): the registry, serving http here, gets no
// request, and nothing is loaded.
func TestImagePullSpeaksHTTPSOnly(t *testing.T) {
	eng := newFakeEngine(t)
	var plain atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plain.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	cli := eng.cli
	cli.Registry = imageruntime.RegistryPuller{Resolver: testResolver{"registry.localhost": "127.0.0.1"},
		Allow: func(string, netip.Addr) bool { return true }}
	err := cli.Pull(context.Background(), "registry.localhost:"+port+"/shop@sha256:"+strings.Repeat("a", 64), io.Discard)
	if err == nil || plain.Load() != 0 {
		t.Fatalf("pull over plain http: %v, %d requests served", err, plain.Load())
	}
	if loads := eng.callsStarting("load"); len(loads) != 0 {
		t.Fatalf("something was loaded: %q", loads)
	}
}

// frontedRegistry is a TLS server in front of the test registry.
type frontedRegistry struct {
	*httptest.Server
	host  string // registry.test:<port>
	roots *x509.CertPool
}

// registryTLSWith serves the test registry's content behind wrap, with TLS for its name.
func registryTLSWith(wrap func(http.Handler) http.Handler) (*frontedRegistry, error) {
	backend := testRegistry()
	proxy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := r.Clone(r.Context())
		req.RequestURI = ""
		req.URL.Scheme, req.URL.Host = "https", testRegistryHost()
		resp, err := backend.Client().Transport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
	s, err := tlsServer(wrap(proxy))
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return &frontedRegistry{Server: s, host: fmt.Sprintf("%s:%s", testRegistryName, port), roots: pool}, nil
}

// tlsServer serves h with TLS on loopback under a certificate for testRegistryName, which
// its own Client() trusts and dials whatever the host asked.
func tlsServer(h http.Handler) (*httptest.Server, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{testRegistryName}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	s := httptest.NewUnstartedServer(h)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	s.StartTLS()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	addr := s.Listener.Addr().String()
	s.Client().Transport = &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	return s, nil
}

// Through the agent's deploy path: an image on a registry whose name resolves to loopback
// fails its deploy with image_pull_failed, saying why, and nothing runs.
func TestImageDeployFromALoopbackRegistryFails(t *testing.T) {
	r, eng := imageRig(t)
	strict := eng.cli
	strict.Registry = strictTestPuller()
	r.l.Image.Containers = strict
	rev := imageRevision(uuid.NewString(), "loopback", []string{"true"})
	err := r.l.Prepare(context.Background(), rev, r.jobs)
	if failCode(err) != CodeImagePullFailed || !strings.Contains(err.Error(), "a loopback address") {
		t.Fatalf("got %v", err)
	}
	if runs := eng.callsStarting("run"); len(runs) != 0 || len(eng.callsStarting("load")) != 0 {
		t.Fatalf("the engine was used: %q", eng.calls())
	}
}
