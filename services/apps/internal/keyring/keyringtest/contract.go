// Package keyringtest is the one contract every keyring.Keyring must keep. The local and the
// Vault transit keyrings both run it, so the service can rely on the same behaviour from each.
package keyringtest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"tori.dev/services/apps/internal/keyring"
)

// Factory makes a fresh keyring for one subtest, and a way to make a keyring that lost it:
// the same kind of keyring with none of its keys (a deleted key file, another transit key).
type Factory func(t *testing.T) (kr keyring.Keyring, lost func(t *testing.T) keyring.Keyring)

// Run checks kr against the contract.
func Run(t *testing.T, newKeyring Factory) {
	ctx := context.Background()
	aadA := []byte("app-a\x00API_KEY")
	aadB := []byte("app-b\x00API_KEY")
	aadOtherKey := []byte("app-a\x00OTHER_KEY")
	secret := []byte("correct horse battery staple")

	t.Run("RoundTrip", func(t *testing.T) {
		kr, _ := newKeyring(t)
		for _, pt := range [][]byte{secret, {}, bytes.Repeat([]byte{0xff, 0x00}, 16<<10)} {
			ct, id, err := kr.Encrypt(ctx, pt, aadA)
			if err != nil {
				t.Fatalf("encrypt: %v", err)
			}
			if len(pt) > 0 && bytes.Contains(ct, pt) {
				t.Fatal("ciphertext contains the plaintext")
			}
			primary, err := kr.Primary(ctx)
			if err != nil || id != primary {
				t.Fatalf("key id %q, primary %q (%v)", id, primary, err)
			}
			got, err := kr.Decrypt(ctx, ct, id, aadA)
			if err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("decrypt: %v (equal=%v)", err, bytes.Equal(got, pt))
			}
		}
		c1, _, _ := kr.Encrypt(ctx, secret, aadA)
		c2, _, _ := kr.Encrypt(ctx, secret, aadA)
		if bytes.Equal(c1, c2) {
			t.Fatal("two encryptions of one value are equal: the nonce is not random")
		}
	})

	t.Run("BoundToAssociatedData", func(t *testing.T) {
		kr, _ := newKeyring(t)
		ct, id, err := kr.Encrypt(ctx, secret, aadA)
		if err != nil {
			t.Fatal(err)
		}
		for name, aad := range map[string][]byte{"another app": aadB, "another key": aadOtherKey, "none": nil} {
			if _, err := kr.Decrypt(ctx, ct, id, aad); !errors.Is(err, keyring.ErrDecrypt) {
				t.Errorf("ciphertext moved to %s: want ErrDecrypt, got %v", name, err)
			}
			if _, _, err := kr.Rewrap(ctx, ct, id, aad); err == nil {
				t.Errorf("rewrap with %s's associated data succeeded", name)
			}
		}
		tampered := bytes.Clone(ct)
		tampered[len(tampered)/2] ^= 0x01 // mid-ciphertext: never a padding bit
		if _, err := kr.Decrypt(ctx, tampered, id, aadA); err == nil {
			t.Error("a tampered ciphertext decrypted")
		}
	})

	t.Run("RotateAndRewrap", func(t *testing.T) {
		kr, _ := newKeyring(t)
		old, oldID, err := kr.Encrypt(ctx, secret, aadA)
		if err != nil {
			t.Fatal(err)
		}
		if err := kr.Rotate(ctx); err != nil {
			t.Fatalf("rotate: %v", err)
		}
		primary, err := kr.Primary(ctx)
		if err != nil || primary == oldID {
			t.Fatalf("primary after rotate %q (was %q): %v", primary, oldID, err)
		}
		// Old ciphertexts still open: sealed deploy snapshots name old keys.
		if got, err := kr.Decrypt(ctx, old, oldID, aadA); err != nil || !bytes.Equal(got, secret) {
			t.Fatalf("old ciphertext after rotate: %v", err)
		}
		if _, id, _ := kr.Encrypt(ctx, secret, aadA); id != primary {
			t.Fatalf("new ciphertext under %q, want the primary %q", id, primary)
		}
		re, reID, err := kr.Rewrap(ctx, old, oldID, aadA)
		if err != nil || reID != primary {
			t.Fatalf("rewrap: id %q, %v", reID, err)
		}
		if got, err := kr.Decrypt(ctx, re, reID, aadA); err != nil || !bytes.Equal(got, secret) {
			t.Fatalf("rewrapped ciphertext: %v", err)
		}
		if _, err := kr.Decrypt(ctx, re, reID, aadB); !errors.Is(err, keyring.ErrDecrypt) {
			t.Fatalf("rewrapped ciphertext lost its binding: %v", err)
		}
		if ok, err := kr.Has(ctx, oldID); err != nil || !ok {
			t.Fatalf("old key gone after rotate: %v %v", ok, err)
		}
	})

	t.Run("UnknownKeyRefusesStart", func(t *testing.T) {
		kr, lost := newKeyring(t)
		ct, id, err := kr.Encrypt(ctx, secret, aadA)
		if err != nil {
			t.Fatal(err)
		}
		if err := keyring.CheckKnown(ctx, kr, map[string]int64{id: 1}); err != nil {
			t.Fatalf("own key reported missing: %v", err)
		}
		gone := lost(t)
		err = keyring.CheckKnown(ctx, gone, map[string]int64{id: 3})
		if !errors.Is(err, keyring.ErrUnknownKey) {
			t.Fatalf("a keyring without the key passed the start check: %v", err)
		}
		if _, err := gone.Decrypt(ctx, ct, id, aadA); err == nil {
			t.Fatal("a keyring without the key decrypted")
		}
		for _, bogus := range []string{"", "local:999", "vault:elsewhere/key:1", "nonsense"} {
			if ok, err := kr.Has(ctx, bogus); ok || err != nil {
				t.Errorf("Has(%q) = %v, %v; want false, nil", bogus, ok, err)
			}
		}
	})
}
