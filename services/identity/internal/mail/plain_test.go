package mail

import "testing"

func TestOnlyALoopbackServerMayGoPlain(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1":        true,
		"127.0.0.2":        true,
		"::1":              true,
		"localhost":        true,
		"LOCALHOST":        true,
		"10.0.0.5":         false,
		"192.168.1.1":      false,
		"smtp.example.com": false,
		"localhost.evil":   false,
		"":                 false,
	} {
		if got := mayGoPlain(host); got != want {
			t.Errorf("mayGoPlain(%q) = %v, want %v", host, got, want)
		}
	}
}
