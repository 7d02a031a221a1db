package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/keyring"
	"tori.dev/services/apps/internal/keyring/keyringtest"
	"tori.dev/services/apps/internal/usecase"
)

// withValues starts a service on cfgEnv's keyring and stores two variables.
func withValues(t *testing.T, cfgEnv map[string]string) (*apptest.Service, string) {
	t.Helper()
	s := apptest.New(t, apptest.Options{Env: cfgEnv})
	acct := apptest.NewAccount()
	s.CreateApp(acct, map[string]any{"name": "keeper"})
	s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/keeper/env", map[string]any{"key": "ONE", "value": "first-secret"})
	s.Must(http.StatusCreated, acct, http.MethodPut, "/api/apps/keeper/env", map[string]any{"key": "TWO", "value": "second-secret"})
	return s, acct
}

// reconfigure is s's configuration with env changed.
func reconfigure(t *testing.T, s *apptest.Service, env map[string]string) config.Config {
	t.Helper()
	return apptest.Config(t, reenv(s, env))
}

// reenv is s's environment with env changed.
func reenv(s *apptest.Service, env map[string]string) map[string]string {
	m := s.Env()
	for k, v := range env {
		m[k] = v
	}
	return m
}

func TestLocalKeyringLostRefusesStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := withValues(t, nil)
	if _, err := openKeyring(ctx, s.Cfg, s.Store); err != nil {
		t.Fatalf("the right keyring: %v", err)
	}

	// The keyring file is gone: refuse, and do not paper over it with a new one.
	empty := t.TempDir()
	cfg := reconfigure(t, s, map[string]string{"DATA_DIR": empty})
	_, err := openKeyring(ctx, cfg, s.Store)
	if !errors.Is(err, keyring.ErrUnknownKey) || !strings.Contains(err.Error(), "restore it from its backup") {
		t.Fatalf("missing keyring file: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(empty, "keyring.json")); !os.IsNotExist(statErr) {
		t.Fatal("a new keyring was written next to stored values")
	}
	// Another keyring (say, a fresh machine's) is refused too, naming the missing keys.
	if _, err := keyring.OpenLocal(filepath.Join(empty, "keyring.json"), true); err != nil {
		t.Fatal(err)
	}
	_, err = openKeyring(ctx, cfg, s.Store)
	if !errors.Is(err, keyring.ErrUnknownKey) || !strings.Contains(err.Error(), "local:1:") || !strings.Contains(err.Error(), "(2 values)") {
		t.Fatalf("foreign keyring: %v", err)
	}
	// So is a switch to Vault that leaves the local values behind.
	srv := keyringtest.StartVault(t)
	cfg = reconfigure(t, s, map[string]string{"VAULT_ADDR": srv.Addr, "VAULT_TOKEN": srv.Token})
	if _, err := openKeyring(ctx, cfg, s.Store); !errors.Is(err, keyring.ErrUnknownKey) {
		t.Fatalf("vault over local values: %v", err)
	}
}

func TestVaultKeyLostRefusesStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := keyringtest.StartVault(t)
	srv.CreateKey(t, "tori-env")
	vaultEnv := map[string]string{"VAULT_ADDR": srv.Addr, "VAULT_TOKEN": srv.Token}
	s, _ := withValues(t, vaultEnv)
	if !strings.HasPrefix(s.Keyring.String(), "Vault transit") {
		t.Fatalf("not on Vault: %s", s.Keyring)
	}
	// A mistyped or recreated transit key holds none of the stored versions.
	cfg := reconfigure(t, s, map[string]string{"VAULT_ADDR": srv.Addr, "VAULT_TOKEN": srv.Token, "VAULT_TRANSIT_KEY": "tori-env-2"})
	if _, err := openKeyring(ctx, cfg, s.Store); !errors.Is(err, keyring.ErrUnknownKey) {
		t.Fatalf("other transit key: %v", err)
	}
	// Nor does the local keyring.
	if _, err := openKeyring(ctx, reconfigure(t, s, map[string]string{"VAULT_ADDR": "", "VAULT_TOKEN": ""}), s.Store); !errors.Is(err, keyring.ErrUnknownKey) {
		t.Fatalf("local keyring over vault values: %v", err)
	}
	// A version trimmed away in Vault (min_decryption_version raised) is missing as well.
	srv.CLI(t, "write", "-f", "transit/keys/tori-env/rotate")
	srv.CLI(t, "write", "transit/keys/tori-env/config", "min_decryption_version=2")
	if _, err := openKeyring(ctx, s.Cfg, s.Store); !errors.Is(err, keyring.ErrUnknownKey) {
		t.Fatalf("trimmed key version: %v", err)
	}
}

// checkRotateKeys checks `apps rotate-keys` on one backend: every value re-sealed under the new
// primary, readable as before, and an older deploy snapshot still opening.
func checkRotateKeys(t *testing.T, cfgEnv map[string]string) {
	ctx := context.Background()
	s, acct := withValues(t, cfgEnv)
	keeper, err := s.Services.Apps.Get(ctx, acct, "keeper")
	if err != nil {
		t.Fatal(err)
	}
	sealed, sealedKey, _, err := s.Services.Env.Snapshot(ctx, keeper.ID, "deploy-before")
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.Store.UsedKeys(ctx)
	if err != nil || len(before) != 1 {
		t.Fatalf("keys before %v %v", before, err)
	}

	var out bytes.Buffer
	if err := rotateKeys(ctx, s.Env(), &out); err != nil {
		t.Fatalf("rotate-keys: %v", err)
	}
	after, err := s.Store.UsedKeys(ctx)
	if err != nil || len(after) != 1 {
		t.Fatalf("keys after %v %v", after, err)
	}
	for id := range after {
		if _, old := before[id]; old || after[id] != 2 {
			t.Fatalf("values not moved to a new key: before %v after %v", before, after)
		}
		if !strings.Contains(out.String(), id) || !strings.Contains(out.String(), "re-encrypted 2 values") {
			t.Fatalf("report %q", out.String())
		}
	}
	// The service (a fresh keyring handle, as after a restart) reads every value.
	kr, err := openKeyring(ctx, s.Cfg, s.Store)
	if err != nil {
		t.Fatal(err)
	}
	svc := usecase.New(usecase.Deps{Store: s.Store, Keyring: kr, Plans: s.Plans, Hosting: hostsEveryDeploy{}, Zones: s.Cfg.Zones(), Cleanup: s.Cfg.Cleanup(), AppsDomain: s.Cfg.AppsDomain})
	vars, err := svc.Env.List(ctx, acct, "keeper")
	if err != nil || len(vars) != 2 || vars[0].Value != "fir********" || vars[1].Value != "sec********" {
		t.Fatalf("after rotation %v %v", vars, err)
	}
	opened, err := svc.Env.OpenForZone(ctx, "local", keeper.ID, "", usecase.Sealed{DeployID: "deploy-before", Sealed: sealed, KeyID: sealedKey})
	if err != nil || opened["ONE"] != "first-secret" {
		t.Fatalf("a snapshot sealed before the rotation: %v %v", opened, err)
	}
	// Running it again rotates again; nothing is lost.
	if err := rotateKeys(ctx, s.Env(), &out); err != nil {
		t.Fatal(err)
	}
	if vars, err := svc.Env.List(ctx, acct, "keeper"); err != nil || len(vars) != 2 {
		t.Fatalf("after a second rotation %v %v", vars, err)
	}
}

func TestRotateKeysLocal(t *testing.T) {
	t.Parallel()
	checkRotateKeys(t, nil)
}

func TestRotateKeysVault(t *testing.T) {
	t.Parallel()
	srv := keyringtest.StartVault(t)
	srv.CreateKey(t, "tori-env")
	checkRotateKeys(t, map[string]string{"VAULT_ADDR": srv.Addr, "VAULT_TOKEN": srv.Token})
}

// hostsEveryDeploy stands in for the deploys service's answer: every zone hosts every
// deploy, with its own snapshot. Who may open what is tested in internal/usecase.
type hostsEveryDeploy struct{}

func (hostsEveryDeploy) Hosts(_ context.Context, _, _, deployID string) (string, bool, error) {
	return deployID, true, nil
}
