// Package keyring encrypts environment values before they reach Postgres. A Keyring binds
// every ciphertext to associated data (the app and variable it belongs to), so a ciphertext
// copied to another row does not decrypt. Two implementations share one contract suite
// (keyringtest): Vault transit with a derived key, and a local AES-256-GCM key file.
package keyring

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"tori.dev/services/apps/internal/env"
)

// Keyring seals and opens small secrets. Key ids name the key version a ciphertext was
// sealed with; they are stored next to the ciphertext so a missing key is detected at start.
type Keyring interface {
	// Encrypt seals plaintext under the primary key, bound to aad.
	Encrypt(ctx context.Context, plaintext, aad []byte) (ciphertext []byte, keyID string, err error)
	// Decrypt opens a ciphertext sealed under keyID with the same aad.
	Decrypt(ctx context.Context, ciphertext []byte, keyID string, aad []byte) ([]byte, error)
	// Rewrap re-seals a ciphertext under the primary key, keeping its aad. Vault does this
	// without the plaintext ever leaving it.
	Rewrap(ctx context.Context, ciphertext []byte, keyID string, aad []byte) ([]byte, string, error)
	// Rotate makes a new primary key. Older keys keep decrypting: deploy snapshots sealed
	// under them must still open.
	Rotate(ctx context.Context) error
	// Primary is the key id new ciphertexts get.
	Primary(ctx context.Context) (string, error)
	// Has reports whether keyID can still be decrypted with.
	Has(ctx context.Context, keyID string) (bool, error)
	// String describes the keyring for logs and errors, without any key material.
	String() string
}

// The sentinels are the env domain's, so the use cases match them without importing a
// keyring.
var (
	// ErrUnknownKey means the keyring does not have the key a ciphertext names.
	ErrUnknownKey = env.ErrUnknownKey
	// ErrDecrypt means the ciphertext does not open: tampered, or bound to other data.
	ErrDecrypt = env.ErrDecrypt
)

// CheckKnown fails when any key id in used (key id → number of stored values) is missing
// from kr. A lost or wrong keyring must stop the service loudly: starting anyway would turn
// every stored value into garbage the first time someone reads it.
func CheckKnown(ctx context.Context, kr Keyring, used map[string]int64) error {
	var missing []string
	for id, n := range used {
		ok, err := kr.Has(ctx, id)
		if err != nil {
			return fmt.Errorf("keyring: check key %s: %w", id, err)
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("%s (%d values)", id, n))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("%w: stored environment values are encrypted with keys that %s does not have: %s. "+
		"Restore the keyring from its backup (or point VAULT_* at the right transit key) before starting; "+
		"starting without them would lose those values",
		ErrUnknownKey, kr, strings.Join(missing, ", "))
}
