package env

import (
	"errors"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	cases := map[string]string{
		"":             "********",
		"a":            "********",
		"abc":          "********",
		"abcd":         "a********",
		"abcdefg":      "a********",
		"abcdefgh":     "ab********",
		"abcdefghijkl": "abc********",
		"a-very-long-secret-value-indeed-" + strings.Repeat("x", 100): "a-v********",
		"ééééééééé": "éé********", // characters, not bytes
		"🔑🔑🔑🔑":      "🔑********",
	}
	for in, want := range cases {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidKey(t *testing.T) {
	for k, want := range map[string]bool{
		"A": true, "API_KEY": true, "X1": true, "A_": true, "DATABASE_URL": true, strings.Repeat("A", 256): true,
		"": false, "a": false, "1A": false, "_A": false, "A-B": false, "A B": false, "Aé": false, strings.Repeat("A", 257): false,
	} {
		if ValidKey(k) != want {
			t.Errorf("ValidKey(%.20q) != %v", k, want)
		}
	}
}

func TestCheckValue(t *testing.T) {
	for v, ok := range map[string]bool{
		"": true, "plain": true, "multi\nline": true, strings.Repeat("x", MaxValueBytes): true,
		strings.Repeat("x", MaxValueBytes+1): false, "nul\x00inside": false, "\xff\xfe": false,
	} {
		if err := CheckValue(v); (err == nil) != ok || (err != nil && !errors.Is(err, ErrInvalidValue)) {
			t.Errorf("CheckValue(%.20q) = %v", v, err)
		}
	}
}

func TestAADSeparatesAppsAndKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range [][2]string{{"app", "KEY"}, {"app", "KEY2"}, {"app2", "KEY"}, {"appK", "EY"}} {
		a := string(AAD(p[0], p[1]))
		if seen[a] {
			t.Errorf("AAD collision for %v", p)
		}
		seen[a] = true
	}
	if string(AAD("a", "b")) == string(SnapshotAAD("a", "b")) {
		t.Error("a variable's AAD equals a snapshot's")
	}
}

func TestChangeCount(t *testing.T) {
	held := map[string]bool{"A": true, "B": true}
	cases := []struct {
		c            Change
		total, added int
	}{
		{Change{Set: map[string]string{"A": "1"}}, 2, 0},
		{Change{Set: map[string]string{"C": "1", "D": "2"}}, 4, 2},
		{Change{Unset: []string{"A", "A", "Z"}}, 1, 0},
		{Change{Set: map[string]string{"C": "1"}, Unset: []string{"A", "B"}}, 1, 1},
	}
	for i, tc := range cases {
		if total, added := tc.c.Count(held); total != tc.total || added != tc.added {
			t.Errorf("%d: Count = %d, %d, want %d, %d", i, total, added, tc.total, tc.added)
		}
	}
	if !MayApply(MaxVarsPerApp+5, 0) || !MayApply(MaxVarsPerApp, 1) || MayApply(MaxVarsPerApp+1, 1) {
		t.Fatal("MayApply")
	}
}
