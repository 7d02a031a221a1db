package managed

import "testing"

func TestOtherLogin(t *testing.T) {
	n := "db_0123456789abcdef0123456789abcdef"
	for _, tc := range []struct{ current, want string }{
		{"", n + "_b"},
		{n, n + "_b"},
		{n + "_b", n},
	} {
		if got := OtherLogin(n, tc.current); got != tc.want || !ValidLogin(n, got) {
			t.Errorf("OtherLogin(%q) = %q, want %q", tc.current, got, tc.want)
		}
	}
	for _, bad := range []string{"db_x_b", n + "_c", "postgres", n + "_b_b"} {
		if ValidLogin(n, bad) {
			t.Errorf("ValidLogin(%q)", bad)
		}
	}
}
