package main

import (
	"context"

	"tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/keyring"
	"tori.dev/services/apps/internal/store"
)

// openKeyring opens Vault transit when VAULT_ADDR is set, else the local keyring file in
// DATA_DIR, and refuses any keyring that lacks a key a stored value names.
func openKeyring(ctx context.Context, cfg config.Config, st *store.Store) (keyring.Keyring, error) {
	used, err := st.UsedKeys(ctx)
	if err != nil {
		return nil, err
	}
	return keyring.Open(ctx, keyring.OptionsFor(cfg), used)
}
