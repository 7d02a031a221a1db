package names

import "testing"

func TestProcessNamesAndFilters(t *testing.T) {
	for _, c := range []struct {
		in           string
		name, filter bool
	}{
		{"web", true, true},
		{"worker-2", true, true},
		{"abcdefghijklmnopqrstuvwxyz1234", true, true},    // 30 characters
		{"abcdefghijklmnopqrstuvwxyz12345", false, false}, // 31
		{"Web", false, false},
		{"2web", false, false},
		{"", false, false},
		{"worker.2", false, true},
		{"cron.nightly.0198a3c4-7d2e-7f00-9a1b-2c3d4e5f6a7b", false, true},
		{"cron.nightly.run.extra", false, false},
		{"worker.", false, false},
		{"worker/2", false, false},
	} {
		if got := ProcessName(c.in); got != c.name {
			t.Errorf("ProcessName(%q) = %v", c.in, got)
		}
		if got := ProcessFilter(c.in); got != c.filter {
			t.Errorf("ProcessFilter(%q) = %v", c.in, got)
		}
	}
}
