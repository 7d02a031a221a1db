package names

import (
	"strings"
	"testing"
)

func TestHostnames(t *testing.T) {
	label := strings.Repeat("a", 63)
	long := strings.Repeat(label+".", 3) + strings.Repeat("b", 61) // 253
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"shop.example.com", true}, {"a.b", true}, {"x-1.example.io", true}, {"123.example.com", true},
		{label + ".com", true}, {long, true},
		{"", false}, {"localhost", false}, {"shop.example.com.", false}, {long + "b", false},
		{strings.Repeat("a", 64) + ".com", false}, {"-shop.example.com", false}, {"shop-.example.com", false},
		{"shop..example.com", false}, {"Shop.example.com", false}, {"*.example.com", false},
		{"shop_1.example.com", false}, {"10.0.0.1", false}, {"shop.example.123", false},
		{"shop.example.com\r\nBcc: x@evil.test", false}, {"shop.example.-com", false},
	} {
		if got := ValidHostname(tc.host); got != tc.ok {
			t.Errorf("ValidHostname(%q) = %v, want %v", tc.host, got, tc.ok)
		}
	}
}

func TestVerificationValues(t *testing.T) {
	hex := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		v  string
		ok bool
	}{
		{VerificationPrefix + hex, true},
		{hex, false}, {VerificationPrefix + hex[:31], false}, {VerificationPrefix + hex + "0", false},
		{VerificationPrefix + strings.ToUpper(hex), false}, {"tori-verify:" + hex, false},
		{VerificationPrefix + "click http://evil.test/aaaaaaaaa", false},
	} {
		if got := ValidVerificationValue(tc.v); got != tc.ok {
			t.Errorf("ValidVerificationValue(%q) = %v, want %v", tc.v, got, tc.ok)
		}
	}
}
