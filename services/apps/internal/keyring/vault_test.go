package keyring_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"tori.dev/services/apps/internal/keyring"
	"tori.dev/services/apps/internal/keyring/keyringtest"
)

func TestVaultTransitKeyringContract(t *testing.T) {
	srv := keyringtest.StartVault(t)
	var n atomic.Int64
	open := func(t *testing.T, key string) keyring.Keyring {
		kr, err := keyring.OpenVault(context.Background(), keyring.VaultConfig{Addr: srv.Addr, Token: srv.Token, Mount: "transit", Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return kr
	}
	keyringtest.Run(t, func(t *testing.T) (keyring.Keyring, func(*testing.T) keyring.Keyring) {
		name := fmt.Sprintf("tori-env-%d", n.Add(1))
		srv.CreateKey(t, name) // as the operator would, before the service starts
		lost := func(t *testing.T) keyring.Keyring {
			// Pointed at another transit key (a rebuilt Vault, a mistyped VAULT_TRANSIT_KEY).
			return open(t, name+"-other")
		}
		return open(t, name), lost
	})
}

func TestVaultRefusesUnderivedKey(t *testing.T) {
	srv := keyringtest.StartVault(t)
	srv.CLI(t, "write", "-f", "transit/keys/plain")
	_, err := keyring.OpenVault(context.Background(), keyring.VaultConfig{Addr: srv.Addr, Token: srv.Token, Mount: "transit", Key: "plain"})
	if err == nil {
		t.Fatal("accepted a transit key without derivation")
	}
	// A missing key is created, derived.
	kr, err := keyring.OpenVault(context.Background(), keyring.VaultConfig{Addr: srv.Addr, Token: srv.Token, Mount: "transit", Key: "fresh"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := kr.Encrypt(context.Background(), []byte("x"), []byte("aad")); err != nil {
		t.Fatal(err)
	}
}
