package imageruntime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	imagetar "github.com/google/go-containerregistry/pkg/v1/tarball"

	"tori.dev/pkg/netguard"
)

// Resolver looks a registry's name up; *net.Resolver is one, tests give their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DefaultMaxImageBytes bounds an image's compressed layers: the tarball the runtime loads
// is written to the zone's disk first.
const DefaultMaxImageBytes = 8 << 30

// RegistryPuller fetches an image from its registry itself (go-containerregistry) and
// writes it as a tarball the runtime loads: the runtime never dials a registry. Every
// connection, a redirect to a blob host included, goes through a dialer whose Control
// refuses loopback, private, link-local, shared (CGNAT), multicast and reserved addresses,
// on the address the socket connects to after resolution, so a name that answered a public
// address to the deploys service and a private one now (DNS rebinding) still gets nothing.
// Only https is spoken, anonymously, and never through a proxy of the agent's environment.
type RegistryPuller struct {
	// Resolver looks registry names up; nil: the system's.
	Resolver Resolver
	// Allow lets an address of a registry host past the deny list. Tests only: a registry
	// served on loopback.
	Allow func(host string, addr netip.Addr) bool
	// RootCAs is the trust for registries' certificates; nil: the system's roots.
	RootCAs *x509.CertPool
	// MaxBytes bounds an image's compressed size; 0: DefaultMaxImageBytes.
	MaxBytes int64
}

// errPlainHTTP refuses a registry request that is not https (go-containerregistry speaks
// http to names it takes for local ones).
var errPlainHTTP = errors.New("refusing a registry request that is not https")

// httpsOnly passes https requests on and refuses the rest, redirects included.
type httpsOnly struct{ next http.RoundTripper }

func (h httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		return nil, fmt.Errorf("%w: %s://%s", errPlainHTTP, req.URL.Scheme, req.URL.Host)
	}
	return h.next.RoundTrip(req)
}

func (p RegistryPuller) transport() http.RoundTripper {
	return httpsOnly{&http.Transport{
		Proxy:                 nil,
		DialContext:           p.dial,
		TLSClientConfig:       &tls.Config{RootCAs: p.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
	}}
}

// dial resolves with p.Resolver and connects to each address in turn through a dialer
// whose Control refuses every non-public one.
func (p RegistryPuller) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var allow func(netip.Addr) bool
	if p.Allow != nil {
		allow = func(a netip.Addr) bool { return p.Allow(host, a) }
	}
	d := netguard.Dialer(allow)
	d.Timeout = 30 * time.Second
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		res := p.Resolver
		if res == nil {
			res = net.DefaultResolver
		}
		if addrs, err = res.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%s: no address", host)
	}
	return nil, errors.Join(errs...)
}

// LocalImage is the name an image is loaded under in the runtime: the digest alone, under a
// registry name that never resolves (.invalid), so a runtime asked to run it can only find
// it among the images it holds (`run --pull never` besides).
func LocalImage(image string) string {
	_, digest, _ := strings.Cut(image, "@sha256:")
	return "tori.invalid/image:" + digest
}

// Fetch pulls image (<registry>/<repo>@sha256:<digest>: the manifest's digest is verified,
// and each layer's as it is read) for this machine's platform and writes it into dir as a
// docker-archive tarball tagged LocalImage(image), whose path it returns.
func (p RegistryPuller) Fetch(ctx context.Context, image, dir string, out io.Writer) (string, error) {
	ref, err := name.NewDigest(image, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("image reference: %w", err)
	}
	tag, err := name.NewTag(LocalImage(image), name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("image reference: %w", err)
	}
	fmt.Fprintf(out, "pulling %s\n", image)
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithTransport(p.transport()),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
	if err != nil {
		return "", err
	}
	m, err := img.Manifest()
	if err != nil {
		return "", err
	}
	total := m.Config.Size
	for _, l := range m.Layers {
		total += l.Size
	}
	limit := p.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxImageBytes
	}
	if total > limit {
		return "", fmt.Errorf("the image is %d bytes, more than the zone's %d", total, limit)
	}
	path := filepath.Join(dir, "image.tar")
	if err := imagetar.WriteToFile(path, tag, img); err != nil {
		return "", err
	}
	fmt.Fprintf(out, "pulled %s (%d layers, %d bytes)\n", image, len(m.Layers), total)
	return path, nil
}
