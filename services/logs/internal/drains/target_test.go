package drains

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"tori.dev/pkg/netguard"
	"tori.dev/services/logs/internal/logs"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		raw  string
		kind Kind
		addr string
		bad  string // part of the refusal's reason; "" for accepted
	}{
		{"https://collector.example.com/ingest", KindHTTPS, "collector.example.com:443", ""},
		{"https://collector.example.com:8443/x?token=abc", KindHTTPS, "collector.example.com:8443", ""},
		{"syslog+tls://logs.example.com:6514", KindSyslog, "logs.example.com:6514", ""},
		{"https://[2001:db8::1]:444/", KindHTTPS, "[2001:db8::1]:444", ""},
		{"", "", "", "required"},
		{"http://collector.example.com/", "", "", "https:// or syslog+tls://"},
		{"ftp://collector.example.com/", "", "", "https:// or syslog+tls://"},
		{"syslog://logs.example.com:514", "", "", "https:// or syslog+tls://"},
		{"collector.example.com/ingest", "", "", "absolute"},
		{"https:///ingest", "", "", "no host"},
		{"https://collector.example.com:0/", "", "", "out of range"},
		{"https://collector.example.com:65536/", "", "", "out of range"},
		{"https://collector.example.com:/", "", "", "empty port"},
		{"syslog+tls://logs.example.com", "", "", "needs a port"},
		{"syslog+tls://logs.example.com:6514/path", "", "", "host:port alone"},
		{"https://collector.example.com/" + strings.Repeat("a", 2048), "", "", "2048"},
		{"https://exa mple.com/", "", "", "white space"},
		{"https://%zz/", "", "", "not a URL"},
	} {
		got, err := ParseURL(c.raw)
		if c.bad != "" {
			var inv *logs.InvalidParameterError
			if !errors.As(err, &inv) || inv.Name != "url" || !strings.Contains(inv.Reason, c.bad) {
				t.Errorf("%q: got %v, want a url refusal saying %q", c.raw, err, c.bad)
			}
			continue
		}
		if err != nil || got.Kind != c.kind || got.Addr() != c.addr {
			t.Errorf("%q: got %+v %v, want %s %s", c.raw, got, err, c.kind, c.addr)
		}
	}
}

func TestMaskedHidesPasswordsAndQueryValues(t *testing.T) {
	for raw, want := range map[string]string{
		"https://user:pa55@collector.example.com/in?token=abc&x=1": "https://user:***@collector.example.com/in?token=***&x=***",
		"https://collector.example.com/in":                         "https://collector.example.com/in",
		"syslog+tls://logs.example.com:6514":                       "syslog+tls://logs.example.com:6514",
	} {
		if got := Masked(raw); got != want {
			t.Errorf("Masked(%q) = %q, want %q", raw, got, want)
		}
	}
}

// The address rule: every address the host names must be public, at create (Check) and at
// every connection (the dialer's Control), but for the configured test receiver.
func TestAddressRule(t *testing.T) {
	g := Guard{}
	for host, forbidden := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "0.0.0.0": true, "100.64.0.1": true, "224.0.0.1": true,
		"::1": true, "fe80::1": true, "fd00::1": true, "ff02::1": true, "::ffff:127.0.0.1": true,
		"8.8.8.8": false, "2606:4700:4700::1111": false, "93.184.216.34": false,
	} {
		tgt := Target{Kind: KindHTTPS, Host: host, Port: 443}
		err := g.Check(context.Background(), tgt)
		if forbidden != errors.Is(err, ErrAddressForbidden) {
			t.Errorf("Check(%s) = %v, forbidden %v", host, err, forbidden)
		}
		ctrl := g.dialer(tgt).Control
		cerr := ctrl("tcp", netip.AddrPortFrom(netip.MustParseAddr(host), 443).String(), nil)
		if forbidden != errors.Is(cerr, netguard.ErrNotPublic) {
			t.Errorf("dial %s = %v, forbidden %v", host, cerr, forbidden)
		}
	}
	// A name resolving to loopback is refused like the address.
	if err := g.Check(context.Background(), Target{Host: "localhost", Port: 443}); !errors.Is(err, ErrAddressForbidden) {
		t.Errorf("localhost: %v", err)
	}
	// The test receiver passes only with its CA configured, and only on its own port.
	test := Guard{TestHost: "127.0.0.1:9999"}
	if err := test.Check(context.Background(), Target{Host: "127.0.0.1", Port: 9999}); !errors.Is(err, ErrAddressForbidden) {
		t.Errorf("test host without a CA passed: %v", err)
	}
	test.TestCA = testPool(t)
	if err := test.Check(context.Background(), Target{Host: "127.0.0.1", Port: 9999}); err != nil {
		t.Errorf("test host refused: %v", err)
	}
	if err := test.Check(context.Background(), Target{Host: "127.0.0.1", Port: 9998}); !errors.Is(err, ErrAddressForbidden) {
		t.Errorf("another port of the test host passed: %v", err)
	}
	if test.dialer(Target{Host: "127.0.0.1", Port: 9998}).Control == nil {
		t.Error("another port of the test host dials unchecked")
	}
}

func TestSignature(t *testing.T) {
	body := []byte(`{"id":"1","message":"hi"}` + "\n")
	// Fixed vector: printf '%s\n' '{"id":"1","message":"hi"}' | openssl dgst -sha256 -hmac secret
	want := "sha256=6beeb6d0278851446651b0984adf530ad6cc8f5755374d78dbd8bff6cfe5c17e"
	if got := Sign("secret", body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	if !Verify("secret", body, want) || Verify("other", body, want) || Verify("secret", append(body, 'x'), want) {
		t.Fatal("Verify accepts what it should not, or refuses what it should accept")
	}
	s1, _ := NewSecret()
	s2, _ := NewSecret()
	if len(s1) != 64 || s1 == s2 {
		t.Fatalf("secrets %q %q", s1, s2)
	}
}
