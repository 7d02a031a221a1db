// Package netguard says whether an IP address is a public unicast destination, and gives a
// net.Dialer a Control function that refuses every other one. It is the check for names a
// customer chooses (an image's registry): a name is only as public as the addresses it
// resolves to, and only the address a socket is about to connect to can be trusted, since
// DNS may answer differently between a check and a dial. The ranges refused are the
// contract's (netrange.Refused), the zone's egress deny list, so a registry is held to what
// an app's own sockets are.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"tori.dev/contract/netrange"
)

// ErrNotPublic is what every refusal wraps.
var ErrNotPublic = errors.New("not a public address")

// Check returns nil for a public unicast address, and otherwise an error wrapping
// ErrNotPublic that names the kind ("a loopback address"). An IPv4-mapped IPv6 address is
// judged as the IPv4 address it carries.
func Check(a netip.Addr) error {
	a = a.Unmap()
	if !a.IsValid() {
		return fmt.Errorf("%w: no address", ErrNotPublic)
	}
	if r, refused := netrange.Of(a); refused {
		return fmt.Errorf("%w: a %s address", ErrNotPublic, r.Kind)
	}
	return nil
}

// Control is a net.Dialer Control function: it runs after name resolution, on the very
// address the socket connects to, and refuses it unless Check accepts it or allow (nil:
// none) does. Every connection of a dialer goes through it, redirects included, so neither
// a second DNS answer (rebinding) nor a redirect to another host gets past it.
func Control(allow func(netip.Addr) bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotPublic, address, err)
		}
		if allow != nil && allow(ap.Addr().Unmap()) {
			return nil
		}
		if err := Check(ap.Addr()); err != nil {
			return fmt.Errorf("refusing to connect to %s: %w", address, err)
		}
		return nil
	}
}

// Dialer is a net.Dialer whose every connection passes Control(allow).
func Dialer(allow func(netip.Addr) bool) *net.Dialer {
	return &net.Dialer{Control: Control(allow)}
}
