package pgstore

import (
	"strings"
	"testing"
)

// The section names each database's two logins and each provisioning role by name (quoted:
// never a keyword such as all or samerole, never a +group), replaces only what lies between
// the markers, and is refused in a file that has none.
func TestZoneHBASection(t *testing.T) {
	db := "db_0123456789abcdef0123456789abcdef"
	lines := zoneHBALines([]string{"tori_provisioner_local"}, []string{db})
	want := []string{
		`host postgres "tori_provisioner_local" 127.0.0.1/32 scram-sha-256`,
		`host postgres "tori_provisioner_local" ::1/128 scram-sha-256`,
		`local "` + db + `" "` + db + `","` + db + `_b" scram-sha-256`,
		`host "` + db + `" "` + db + `","` + db + `_b" 127.0.0.1/32 scram-sha-256`,
		`host "` + db + `" "` + db + `","` + db + `_b" ::1/128 scram-sha-256`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if strings.Contains(l, "+") || strings.Contains(l, "samerole") || strings.Contains(l, " all ") {
			t.Fatalf("a line by membership or for all: %s", l)
		}
	}
	head := "local all postgres peer map=zone\n" + ZoneHBABegin + "\n"
	tail := ZoneHBAEnd + "\nhost all all 127.0.0.1/32 reject\n"
	file := head + "host old old 127.0.0.1/32 scram-sha-256\n" + tail
	got, ok := replaceZoneSection(file, lines)
	if !ok || got != head+strings.Join(want, "\n")+"\n"+tail {
		t.Fatalf("replaced (%v):\n%s", ok, got)
	}
	if empty, ok := replaceZoneSection(got, nil); !ok || empty != head+tail {
		t.Fatalf("emptied (%v):\n%s", ok, empty)
	}
	if _, ok := replaceZoneSection("host all all 127.0.0.1/32 scram-sha-256\n", lines); ok {
		t.Fatal("a file without the zone's section was rewritten")
	}
}
