package names

import (
	"strings"
	"testing"
)

func TestPreviewLabel(t *testing.T) {
	long := strings.Repeat("a", 60) + "-b"
	cases := []struct {
		slug, id, want string
	}{
		{"shop", "a1b2c3", "shop-a1b2c3"},
		{"my-app", "zzzzzz", "my-app-zzzzzz"},
		{long, "a1b2c3", strings.Repeat("a", 56) + "-a1b2c3"},
		{strings.Repeat("a", 55) + "-bcd", "a1b2c3", strings.Repeat("a", 55) + "-a1b2c3"},
	}
	for _, c := range cases {
		got := PreviewLabel(c.slug, c.id)
		if got != c.want {
			t.Errorf("PreviewLabel(%q, %q) = %q, want %q", c.slug, c.id, got, c.want)
		}
		if len(got) > 63 {
			t.Errorf("label %q longer than 63", got)
		}
		id, label, ok := PreviewIDFromHost(got+".preview.apps.test", "preview.apps.test")
		if !ok || id != c.id || label != got {
			t.Errorf("PreviewIDFromHost(%q) = %q %q %v", got, id, label, ok)
		}
	}
}

func TestPreviewIDFromHostRefuses(t *testing.T) {
	for _, h := range []string{
		"shop.apps.test", "preview.apps.test", "a.b-a1b2c3.preview.apps.test",
		"shop-A1B2C.preview.apps.test", "shop-a1b2c.preview.apps.test", "shop-a1b2c3d.preview.apps.test",
		"-a1b2c3.preview.apps.testx",
	} {
		if id, _, ok := PreviewIDFromHost(h, "preview.apps.test"); ok {
			t.Errorf("PreviewIDFromHost(%q) = %q, want refusal", h, id)
		}
	}
	if id, _, ok := PreviewIDFromHost("SHOP-A1B2C3.Preview.Apps.Test.", "preview.apps.test"); !ok || id != "a1b2c3" {
		t.Errorf("case-insensitive host: %q %v", id, ok)
	}
}

func TestNewPreviewID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewPreviewID()
		if !ValidPreviewID(id) {
			t.Fatalf("NewPreviewID() = %q, not a valid id", id)
		}
		seen[id] = true
	}
	if len(seen) < 990 {
		t.Fatalf("only %d distinct ids of 1000", len(seen))
	}
}

func TestValidPreviewName(t *testing.T) {
	for name, want := range map[string]bool{"pr-12": true, "a": true, "": false, "Pr": false, "abcdefghijklmnopqrstu": false, "a_b": false} {
		if ValidPreviewName(name) != want {
			t.Errorf("ValidPreviewName(%q) != %v", name, want)
		}
	}
}
