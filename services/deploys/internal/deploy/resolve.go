package deploy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"tori.dev/pkg/netguard"
)

// Resolver looks a name up; *net.Resolver is one, tests give their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolveTimeout bounds the deploy-time lookup of a registry's name.
const resolveTimeout = 3 * time.Second

// CheckResolved refuses an image whose registry's name resolves to any address that is not
// public (loopback, private, link-local, shared/CGNAT and the zone's other refused ranges):
// `127.0.0.1.nip.io` is a public-looking name for the host's loopback. It is the early,
// clear answer; the zone's pull checks every address it connects to again, since DNS may
// answer differently later. A name that does not resolve now is accepted (the pull then
// fails with image_pull_failed), as a registry's DNS may be down for a moment.
func (r Registries) CheckResolved(ctx context.Context, image string) error {
	i := strings.IndexByte(image, '/')
	if i < 0 {
		return fmt.Errorf("%w: no registry", ErrInvalidImage)
	}
	host := strings.ToLower(image[:i])
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	res := r.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := res.LookupNetIP(ctx, "ip", strings.TrimSuffix(name, "."))
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if err := netguard.Check(a); err != nil {
			return fmt.Errorf("%w: registry %s resolves to %s", ErrInvalidImage, host, strings.TrimPrefix(err.Error(), netguard.ErrNotPublic.Error()+": "))
		}
	}
	return nil
}
