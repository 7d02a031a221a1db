package domains

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	valid := map[string]string{
		"example.com":                   "example.com",
		"example.com.":                  "example.com",
		"www.example.com":               "www.example.com",
		"a-b.c0.example.org":            "a-b.c0.example.org",
		"xn--bcher-kva.example":         "xn--bcher-kva.example",
		"1password.example.com":         "1password.example.com",
		"apps.localhost.example.com":    "apps.localhost.example.com",
		"myapps.localhost":              "myapps.localhost",
		strings.Repeat("a", 63) + ".io": strings.Repeat("a", 63) + ".io",
	}
	for in, want := range valid {
		if got, err := Normalize(in, "apps.localhost"); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	invalid := []string{
		"", ".", "com", "localhost", "example..com", ".example.com", "example.com..",
		"apps.localhost", "apps.localhost.", "x.apps.localhost", "a.b.apps.localhost", "X.APPS.LOCALHOST",
		"Example.com", "EXAMPLE.COM", "1.2.3.4", "10.0.0.1.", "::1", "[::1]", "2001:db8::1", "*.example.com", "*",
		"-a.example.com", "a-.example.com", "exa_mple.com", "exa mple.com", "example.com/", "http://example.com",
		"example.com:443", "ex\x00ample.com", "bücher.example", strings.Repeat("a", 64) + ".com",
		strings.Repeat("abcdefghi.", 26) + "com",
	}
	for _, in := range invalid {
		if got, err := Normalize(in, "apps.localhost"); !errors.Is(err, ErrInvalidHostname) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrInvalidHostname", in, got, err)
		}
	}
}

func TestVerificationRecord(t *testing.T) {
	d := Domain{Hostname: "shop.example.com", Token: NewToken()}
	v := d.Verification()
	if v.Type != "TXT" || v.Name != "_tori-challenge.shop.example.com" || !strings.HasPrefix(v.Value, "tori-verify=") || len(v.Value) != len("tori-verify=")+32 {
		t.Fatalf("verification %+v", v)
	}
	if NewToken() == NewToken() {
		t.Fatal("tokens repeat")
	}
}
