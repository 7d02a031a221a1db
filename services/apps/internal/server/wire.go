// Package server assembles the apps service from its configuration: the store, the keyring,
// the use cases, the HTTP app and the bus workers. cmd/apps calls Run or RotateKeys.
package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/env"
	"tori.dev/services/apps/internal/keyring"
	"tori.dev/services/apps/internal/store"
)

// Services are the use cases over one store and keyring.
type Services struct {
	Apps    *apps.Service
	Env     *env.Service
	Domains *domains.Service
}

// NewServices wires the use cases. plans answers when the account copy has no plan yet.
func NewServices(cfg config.Config, st *store.Store, kr keyring.Keyring, plans accounts.PlanSource) Services {
	resolver := accounts.Resolver{Store: st, Source: plans}
	a := &apps.Service{
		Store: st, Accounts: resolver, Zones: cfg.Zones(), Cleanup: cfg.Cleanup(),
		NewID: newID, Now: time.Now,
	}
	return Services{
		Apps: a,
		Env:  &env.Service{Apps: a, Store: st, Keyring: kr, Now: time.Now},
		Domains: &domains.Service{
			Apps: a, Accounts: resolver, Store: st, AppsDomain: cfg.AppsDomain, NewID: newID, Now: time.Now,
		},
	}
}

// newID is a UUIDv7, sortable by creation as the conventions ask.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// KeyringPath is where the local keyring lives.
func KeyringPath(cfg config.Config) string { return filepath.Join(cfg.DataDir, "keyring.json") }

// OpenKeyring opens Vault transit when VAULT_ADDR is set, else the local keyring file,
// then refuses to go on if any stored value names a key the keyring lacks. The local file
// is created only when nothing is stored yet: a missing file next to stored values is a
// lost keyring, never a reason to start afresh.
func OpenKeyring(ctx context.Context, cfg config.Config, st *store.Store) (keyring.Keyring, error) {
	used, err := st.UsedKeys(ctx)
	if err != nil {
		return nil, err
	}
	var kr keyring.Keyring
	if cfg.UseVault() {
		kr, err = keyring.OpenVault(ctx, keyring.VaultConfig{
			Addr: cfg.VaultAddr, Token: cfg.VaultToken, Mount: cfg.VaultTransitMount, Key: cfg.VaultTransitKey,
		})
	} else {
		kr, err = keyring.OpenLocal(KeyringPath(cfg), len(used) == 0)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %d stored environment values need the keyring %s, which is missing; "+
				"restore it from its backup before starting", keyring.ErrUnknownKey, total(used), KeyringPath(cfg))
		}
	}
	if err != nil {
		return nil, err
	}
	if err := keyring.CheckKnown(ctx, kr, used); err != nil {
		return nil, err
	}
	return kr, nil
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
