package keyring_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"tori.dev/services/apps/internal/keyring"
	"tori.dev/services/apps/internal/keyring/keyringtest"
)

func TestLocalKeyringContract(t *testing.T) {
	keyringtest.Run(t, func(t *testing.T) (keyring.Keyring, func(*testing.T) keyring.Keyring) {
		path := filepath.Join(t.TempDir(), "keyring.json")
		kr, err := keyring.OpenLocal(path, true)
		if err != nil {
			t.Fatal(err)
		}
		lost := func(t *testing.T) keyring.Keyring {
			// The operator lost the file and the service made a new one on start.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			k, err := keyring.OpenLocal(path, true)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		return kr, lost
	})
}

func TestLocalKeyringFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "keyring.json")

	if _, err := keyring.OpenLocal(path, false); err == nil {
		t.Fatal("opened a missing keyring without create")
	}
	kr, err := keyring.OpenLocal(path, true)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("keyring file mode %v, want 0600 (%v)", info.Mode().Perm(), err)
	}

	// A rotation made by another process (apps rotate-keys) is seen by a running one.
	other, err := keyring.OpenLocal(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	ct, id, err := other.Encrypt(ctx, []byte("v"), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := kr.Primary(ctx); p != id {
		t.Fatalf("running keyring's primary %q, want the rotated %q", p, id)
	}
	if _, err := kr.Decrypt(ctx, ct, id, []byte("aad")); err != nil {
		t.Fatalf("running keyring cannot open the rotated key's ciphertext: %v", err)
	}

	// A keyring file others can read is refused.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := keyring.OpenLocal(path, false); err == nil {
		t.Fatal("opened a world-readable keyring")
	}
}
