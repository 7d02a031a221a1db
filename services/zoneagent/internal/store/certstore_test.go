package store_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// The storage keeps values as certmagic expects (files and folders by "/"), sealed at rest.
func TestCertStorageKeepsSealedValues(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewPool(t)
	s, err := store.NewCertStorage(pool, testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.NewCertStorage(pool, []byte("short")); !errors.Is(err, store.ErrStorageKey) {
		t.Fatalf("a short key: %v", err)
	}
	secret := []byte("-----BEGIN EC PRIVATE KEY----- secret")
	for k, v := range map[string][]byte{
		"certificates/ca/a.example/a.example.key": secret,
		"certificates/ca/a.example/a.example.crt": []byte("crt"),
		"certificates/ca/b.example/b.example.crt": []byte("crt-b"),
		"certificates/ca_x/c.example/c.crt":       []byte("c"), // _ is no LIKE wildcard
	} {
		if err := s.Store(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load(ctx, "certificates/ca/a.example/a.example.key")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Load: %q %v", got, err)
	}
	if _, err := s.Load(ctx, "certificates/ca/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a missing key: %v", err)
	}
	var raw []byte
	if err := pool.QueryRow(ctx, `SELECT value FROM tls_objects WHERE key = 'certificates/ca/a.example/a.example.key'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("PRIVATE KEY")) {
		t.Fatal("the key is stored in plaintext")
	}
	// Another key does not open it, and neither does a row moved to another name.
	other, _ := store.NewCertStorage(pool, testKey(2))
	if _, err := other.Load(ctx, "certificates/ca/a.example/a.example.key"); err == nil {
		t.Fatal("a value opened with another key")
	}
	if _, err := pool.Exec(ctx, `UPDATE tls_objects SET key = 'moved' WHERE key = 'certificates/ca/b.example/b.example.crt'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "moved"); err == nil {
		t.Fatal("a value opened under another name")
	}

	list, err := s.List(ctx, "certificates/ca", false)
	if err != nil || !slices.Equal(list, []string{"certificates/ca/a.example"}) {
		t.Fatalf("List: %v %v", list, err)
	}
	list, err = s.List(ctx, "certificates", true)
	if err != nil || len(list) != 3 {
		t.Fatalf("recursive List: %v %v", list, err)
	}
	if !s.Exists(ctx, "certificates/ca/a.example") || !s.Exists(ctx, "certificates/ca/a.example/a.example.crt") || s.Exists(ctx, "certificates/c") {
		t.Fatal("Exists")
	}
	info, err := s.Stat(ctx, "certificates/ca/a.example/a.example.crt")
	if err != nil || !info.IsTerminal || info.Size != 3 || time.Since(info.Modified) > time.Minute {
		t.Fatalf("Stat of a value: %+v %v", info, err)
	}
	if info, err := s.Stat(ctx, "certificates/ca"); err != nil || info.IsTerminal {
		t.Fatalf("Stat of a folder: %+v %v", info, err)
	}
	if err := s.Delete(ctx, "certificates/ca"); err != nil {
		t.Fatal(err)
	}
	if s.Exists(ctx, "certificates/ca/a.example/a.example.key") || !s.Exists(ctx, "certificates/ca_x/c.example/c.crt") {
		t.Fatal("Delete of a folder took too little or too much")
	}
}

// Lock is held across the zone: a second agent waits until the first unlocks.
func TestCertStorageLockIsZoneWide(t *testing.T) {
	ctx := context.Background()
	pools := storetest.NewPools(t, 2)
	a, _ := store.NewCertStorage(pools[0], testKey(1))
	b, _ := store.NewCertStorage(pools[1], testKey(1))
	if err := a.Lock(ctx, "issue_cert_a.example"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := b.Lock(short, "issue_cert_a.example"); err == nil {
		t.Fatal("two agents held one lock")
	}
	// Another name is free.
	if err := b.Lock(ctx, "issue_cert_b.example"); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- b.Lock(ctx, "issue_cert_a.example") }()
	select {
	case err := <-got:
		t.Fatalf("locked while held elsewhere: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := a.Unlock(ctx, "issue_cert_a.example"); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(ctx, "issue_cert_a.example"); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(ctx, "issue_cert_b.example"); err != nil {
		t.Fatal(err)
	}
	if err := a.Unlock(ctx, "issue_cert_a.example"); err == nil {
		t.Fatal("unlocked a lock not held")
	}
}
