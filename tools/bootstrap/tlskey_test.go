package main

import (
	"encoding/base64"
	"testing"
)

// The key is made once (32 random bytes) and kept across runs; a damaged one is replaced.
func TestTLSStorageKeyIsMadeOnceAndKept(t *testing.T) {
	file := map[string]string{}
	ensureTLSStorageKey(file)
	k, err := base64.StdEncoding.DecodeString(file[tlsStorageKeyVar])
	if err != nil || len(k) != 32 {
		t.Fatalf("key %q: %v", file[tlsStorageKeyVar], err)
	}
	first := file[tlsStorageKeyVar]
	ensureTLSStorageKey(file)
	if file[tlsStorageKeyVar] != first {
		t.Fatal("a second run replaced the key")
	}
	other := map[string]string{}
	ensureTLSStorageKey(other)
	if other[tlsStorageKeyVar] == first {
		t.Fatal("two zones share a key")
	}
	bad := map[string]string{tlsStorageKeyVar: "short"}
	ensureTLSStorageKey(bad)
	if k, _ := base64.StdEncoding.DecodeString(bad[tlsStorageKeyVar]); len(k) != 32 {
		t.Fatal("a damaged key was kept")
	}
}
