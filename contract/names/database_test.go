package names

import "testing"

func TestDatabaseNames(t *testing.T) {
	for _, tc := range []struct {
		id, want string // want "" for no name
	}{
		{"01936b2e-1f6a-7c3d-9e4f-0a1b2c3d4e5f", "db_01936b2e1f6a7c3d9e4f0a1b2c3d4e5f"},
		{"00000000-0000-0000-0000-000000000000", "db_00000000000000000000000000000000"},
		{"01936B2E-1F6A-7C3D-9E4F-0A1B2C3D4E5F", ""}, {"01936b2e1f6a7c3d9e4f0a1b2c3d4e5f", ""},
		{"01936b2e-1f6a-7c3d-9e4f-0a1b2c3d4e5", ""}, {"01936b2e-1f6a-7c3d-9e4f_0a1b2c3d4e5f", ""},
		{"01936b2e-1f6a-7c3d-9e4f-0a1b2c3d4e5g", ""}, {"", ""}, {"../../etc/passwd-0000000000000000000", ""},
	} {
		got, ok := DatabaseName(tc.id)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("DatabaseName(%q) = %q, %v; want %q", tc.id, got, ok, tc.want)
		}
		if ok && !ValidDatabaseName(got) {
			t.Errorf("DatabaseName(%q) = %q, which ValidDatabaseName refuses", tc.id, got)
		}
	}
	for _, name := range []string{"db_0193", "db_01936b2e1f6a7c3d9e4f0a1b2c3d4e5f_b", "DB_01936b2e1f6a7c3d9e4f0a1b2c3d4e5f",
		"postgres", "db_01936b2e1f6a7c3d9e4f0a1b2c3d4e5f;drop"} {
		if ValidDatabaseName(name) {
			t.Errorf("ValidDatabaseName(%q) = true", name)
		}
	}
}
