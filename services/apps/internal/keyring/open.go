package keyring

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"tori.dev/services/apps/internal/config"
)

// Options choose the keyring: Vault transit when Vault is set, else the local file at
// LocalPath.
type Options struct {
	Vault     *VaultConfig
	LocalPath string
}

// OptionsFor is the keyring cfg names: Vault transit when VAULT_ADDR is set, else the local
// file in DATA_DIR. The service and its tests open it the same way.
func OptionsFor(cfg config.Config) Options {
	opts := Options{LocalPath: filepath.Join(cfg.DataDir, "keyring.json")}
	if cfg.UseVault() {
		opts.Vault = &VaultConfig{
			Addr: cfg.VaultAddr, Token: cfg.VaultToken, Mount: cfg.VaultTransitMount, Key: cfg.VaultTransitKey,
		}
	}
	return opts
}

// Open opens the keyring opts name, then refuses to go on if any stored value (used: key id
// → number of values) names a key the keyring lacks. The local file is created only when
// nothing is stored yet: a missing file next to stored values is a lost keyring, never a
// reason to start afresh.
func Open(ctx context.Context, opts Options, used map[string]int64) (Keyring, error) {
	var kr Keyring
	var err error
	if opts.Vault != nil {
		kr, err = OpenVault(ctx, *opts.Vault)
	} else {
		kr, err = OpenLocal(opts.LocalPath, len(used) == 0)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %d stored environment values need the keyring %s, which is missing; "+
				"restore it from its backup before starting", ErrUnknownKey, total(used), opts.LocalPath)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := CheckKnown(ctx, kr, used); err != nil {
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
