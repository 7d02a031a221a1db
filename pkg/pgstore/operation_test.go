package pgstore

import "testing"

func TestOperation(t *testing.T) {
	for sql, want := range map[string]string{
		"select 1": "SELECT", "  INSERT INTO x": "INSERT", "-- note\nUPDATE x": "UPDATE", "(SELECT 1)": "SELECT", "": "QUERY",
	} {
		if got := operation(sql); got != want {
			t.Errorf("operation(%q) = %q, want %q", sql, got, want)
		}
	}
}
