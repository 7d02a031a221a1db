package env

import "testing"

func TestRewriteDatabaseURL(t *testing.T) {
	c := DatabaseCredentials{User: "db_ab", Password: "new", Database: "db_ab", Host: "127.0.0.1", Port: 6432}
	for _, tc := range []struct {
		name, current string
		has           bool
		want          string
		write         bool
	}{
		{"unset", "", false, "postgres://db_ab:new@127.0.0.1:6432/db_ab?sslmode=disable", true},
		{"ours, unchanged", "postgres://db_ab:old@127.0.0.1:6432/db_ab?sslmode=disable", true,
			"postgres://db_ab:new@127.0.0.1:6432/db_ab?sslmode=disable", true},
		{"a parameter added", "postgres://db_ab:old@127.0.0.1:6432/db_ab?sslmode=disable&application_name=web&pool_max_conns=4", true,
			"postgres://db_ab:new@127.0.0.1:6432/db_ab?application_name=web&pool_max_conns=4&sslmode=disable", true},
		{"our parameter edited", "postgres://db_ab:old@127.0.0.1:6432/db_ab?sslmode=prefer", true,
			"postgres://db_ab:new@127.0.0.1:6432/db_ab?sslmode=prefer", true},
		{"another host", "postgres://u:p@db.example.com:5432/app", true, "", false},
		{"another port of the same host", "postgres://u:p@127.0.0.1:5432/app", true, "", false},
		{"not a URL", "%zz", true, "", false},
		{"rotated to the second login", "postgres://db_ab_b:old@127.0.0.1:6432/db_ab?sslmode=disable&application_name=web", true,
			"postgres://db_ab:new@127.0.0.1:6432/db_ab?application_name=web&sslmode=disable", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, write := RewriteDatabaseURL(tc.current, tc.has, c)
			if got != tc.want || write != tc.write {
				t.Fatalf("got %q %v, want %q %v", got, write, tc.want, tc.write)
			}
		})
	}
}

func TestRemovesDatabaseURL(t *testing.T) {
	for _, tc := range []struct {
		current string
		want    bool
	}{
		{"postgres://db_ab:p@127.0.0.1:6432/db_ab?sslmode=disable&x=1", true},
		{"postgres://db_ab_b:p@127.0.0.1:6432/db_ab?sslmode=disable", true},
		{"postgres://db_cd:p@127.0.0.1:6432/db_cd", false},
		{"postgres://db_ab_c:p@127.0.0.1:6432/db_ab", false},
		{"postgres://u:p@db.example.com/app", false},
		{"", false},
	} {
		if got := RemovesDatabaseURL(tc.current, "db_ab"); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.current, got, tc.want)
		}
	}
}
