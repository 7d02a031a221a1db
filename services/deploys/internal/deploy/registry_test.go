package deploy

import (
	"errors"
	"strings"
	"testing"
)

func TestImageRegistriesDefaultPolicy(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("cd", 32)
	for _, tc := range []struct {
		registry string
		ok       bool
	}{
		{"ghcr.io", true},
		{"registry.example.com:5000", true},
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com", true},
		{"Docker.IO", true},
		{"registry.test", true}, // never resolves: harmless, and the e2e tests use it

		{"localhost", false},
		{"localhost:5000", false},
		{"LOCALHOST", false},
		{"registry.localhost", false},
		{"127.0.0.1", false},
		{"127.0.0.1:5000", false},
		{"127.1", false},
		{"2130706433", false},
		{"0x7f.0.0.1", false},
		{"[::1]:5000", false},
		{"[::ffff:127.0.0.1]", false},
		{"10.0.0.5", false},
		{"172.16.3.4:443", false},
		{"192.168.1.10", false},
		{"100.64.0.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"[fe80::1]", false},
		{"[fd00::1]:5000", false},
		{"0.0.0.0", false},
		{"8.8.8.8", false},       // a public literal is still not a name
		{"registry", false},      // single label: a compose or cluster service name
		{"registry:5000", false}, // likewise
		{"nas.local", false},
		{"registry.internal", false},
		{"box.home.arpa", false},
		{"git.lan", false},
		{"registry.example.com:", false},
		{"registry.example.com:99999999", false},
		{"-bad.example.com", false},
	} {
		_, err := ParseImage(tc.registry + "/acme/web" + digest)
		if (err == nil) != tc.ok {
			t.Errorf("registry %q: %v, want ok=%v", tc.registry, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidImage) {
			t.Errorf("registry %q: %v is not ErrInvalidImage", tc.registry, err)
		}
	}
}

func TestImageRegistriesAllowList(t *testing.T) {
	r, err := NewRegistries([]string{"ghcr.io", " Registry.Example.com:5000 ", ""})
	if err != nil {
		t.Fatal(err)
	}
	digest := "@sha256:" + strings.Repeat("cd", 32)
	for _, tc := range []struct {
		registry string
		ok       bool
	}{
		{"ghcr.io", true},
		{"registry.example.com:5000", true},
		{"docker.io", false},                 // public, but not listed
		{"registry.example.com", false},      // listed with a port only
		{"registry.example.com:5001", false}, // another port
	} {
		_, err := r.ParseImage(tc.registry + "/acme/web" + digest)
		if (err == nil) != tc.ok {
			t.Errorf("registry %q: %v, want ok=%v", tc.registry, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidImage) {
			t.Errorf("registry %q: %v is not ErrInvalidImage", tc.registry, err)
		}
	}

	// A list cannot let a private registry in.
	for _, bad := range []string{"localhost:5000", "10.0.0.5", "registry", "[::1]", "169.254.169.254"} {
		if _, err := NewRegistries([]string{bad}); err == nil {
			t.Errorf("NewRegistries accepted %q", bad)
		}
	}
}
