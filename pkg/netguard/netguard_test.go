package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		addr string
		kind string // "" public
	}{
		{"8.8.8.8", ""},
		{"203.0.113.7", ""},
		{"2606:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.9.9.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"100.64.0.1", "shared (CGNAT)"},
		{"100.127.255.254", "shared (CGNAT)"},
		{"0.0.0.0", "unspecified"},
		{"::", "loopback"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
	} {
		err := Check(netip.MustParseAddr(tc.addr))
		switch {
		case tc.kind == "" && err != nil:
			t.Errorf("%s: %v, want public", tc.addr, err)
		case tc.kind != "" && (!errors.Is(err, ErrNotPublic) || !strings.Contains(err.Error(), "a "+tc.kind+" address")):
			t.Errorf("%s: %v, want %s", tc.addr, err, tc.kind)
		}
	}
}

// The dialer refuses a loopback listener the host reaches, unless allowed.
func TestDialerRefusesNonPublic(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Dialer(nil).DialContext(context.Background(), "tcp", ln.Addr().String()); !errors.Is(err, ErrNotPublic) {
		t.Fatalf("dial loopback: %v", err)
	}
	loopbackOK := func(a netip.Addr) bool { return a.IsLoopback() }
	c, err := Dialer(loopbackOK).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("the allowed loopback: %v", err)
	}
	c.Close()
}
