package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/env"
)

// AppFinder finds the caller's live app; apps.ErrNotFound otherwise.
type AppFinder interface {
	Get(ctx context.Context, accountID, slug string) (apps.App, error)
}

// Env is the environment's use cases. Values are sealed by the keyring, bound to (app id,
// variable name), before they reach the store.
type Env struct {
	Apps    AppFinder
	Store   Store
	Keyring Keyring
	// Accounts names the plan in a refusal at the variable cap; nil leaves it out.
	Accounts AccountResolver
	Now      func() time.Time
}

// PutFor seals and stores one variable of app, which the caller has already found to be its
// own (so an unknown or foreign app is 404 before anything about the body is judged);
// created is true when it did not exist. Static apps store it too: the contract says the row
// is kept and never read.
func (s *Env) PutFor(ctx context.Context, app apps.App, key, value string) (bool, error) {
	if !env.ValidKey(key) {
		return false, env.ErrInvalidKey
	}
	if err := env.CheckValue(value); err != nil {
		return false, err
	}
	ct, keyID, err := s.Keyring.Encrypt(ctx, []byte(value), env.AAD(app.ID, key))
	if err != nil {
		return false, fmt.Errorf("env: seal: %w", err)
	}
	now := stamp(s.Now())
	var created bool
	err = s.Store.InTx(ctx, func(tx Tx) error {
		live, err := tx.ShareLiveApp(ctx, app.ID)
		if err != nil {
			return err
		}
		if !live {
			return apps.ErrNotFound // deleted between the lookup and the write
		}
		count, has, err := tx.LockEnv(ctx, app.ID, key)
		if err != nil {
			return err
		}
		if !has && !env.MayAdd(count) {
			return env.ErrVarLimit
		}
		created, err = tx.UpsertVar(ctx, app.ID, env.Sealed{Key: key, Ciphertext: ct, KeyID: keyID, CreatedAt: now, UpdatedAt: now})
		return err
	})
	if errors.Is(err, env.ErrVarLimit) {
		return false, s.varLimit(ctx, app.AccountID)
	}
	return created, err
}

// varLimit is the refusal at the cap. The cap is the same on every plan; the plan is named,
// as every limit answer does, when it can be had (a copy, or billing's answer).
func (s *Env) varLimit(ctx context.Context, accountID string) error {
	le := &accounts.LimitError{Kind: env.ErrVarLimit, Limit: env.MaxVarsPerApp}
	if s.Accounts != nil {
		if acct, err := s.Accounts.Resolve(ctx, accountID); err == nil {
			le.Plan = acct.Plan.Name
		}
	}
	return le
}

// List returns the app's variables, masked, sorted by name.
func (s *Env) List(ctx context.Context, accountID, slug string) ([]env.Masked, error) {
	app, err := s.Apps.Get(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	vars, err := s.Store.Vars(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	out := make([]env.Masked, 0, len(vars))
	for _, v := range vars {
		// The mask needs the value's length and first characters; the plaintext lives only
		// for this line.
		pt, err := s.Keyring.Decrypt(ctx, v.Ciphertext, v.KeyID, env.AAD(app.ID, v.Key))
		if err != nil {
			return nil, fmt.Errorf("env: open %s of app %s: %w", v.Key, app.ID, err)
		}
		out = append(out, env.Masked{Key: v.Key, Value: env.Mask(string(pt))})
		clear(pt)
	}
	return out, nil
}

// Delete removes one variable.
func (s *Env) Delete(ctx context.Context, accountID, slug, key string) error {
	app, err := s.Apps.Get(ctx, accountID, slug)
	if err != nil {
		return err
	}
	if !env.ValidKey(key) {
		return env.ErrNotSet // a name that cannot exist is simply not set
	}
	return s.Store.DeleteVar(ctx, app.ID, key)
}

// snapshot is the plaintext inside a sealed snapshot; it exists only in memory.
type snapshot struct {
	Version int               `json:"v"`
	Vars    map[string]string `json:"vars"`
}

// Snapshot seals all of an app's current variables for one deploy. The result opens only
// for that app and deploy, so a deploy cannot start with another's environment.
func (s *Env) Snapshot(ctx context.Context, appID, deployID string) (sealed []byte, keyID string, count int, err error) {
	live, err := s.Store.AppLive(ctx, appID)
	if err != nil {
		return nil, "", 0, err
	}
	if !live || deployID == "" {
		return nil, "", 0, env.ErrAppGone
	}
	vars, err := s.Store.Vars(ctx, appID)
	if err != nil {
		return nil, "", 0, err
	}
	snap := snapshot{Version: 1, Vars: make(map[string]string, len(vars))}
	for _, v := range vars {
		pt, err := s.Keyring.Decrypt(ctx, v.Ciphertext, v.KeyID, env.AAD(appID, v.Key))
		if err != nil {
			return nil, "", 0, fmt.Errorf("env: open %s of app %s: %w", v.Key, appID, err)
		}
		snap.Vars[v.Key] = string(pt)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		return nil, "", 0, err
	}
	defer clear(b)
	sealed, keyID, err = s.Keyring.Encrypt(ctx, b, env.SnapshotAAD(appID, deployID))
	if err != nil {
		return nil, "", 0, fmt.Errorf("env: seal snapshot: %w", err)
	}
	return sealed, keyID, len(vars), nil
}

// Open returns a sealed snapshot's variables, for the zone starting that deploy.
func (s *Env) Open(ctx context.Context, appID, deployID string, sealed []byte, keyID string) (map[string]string, error) {
	live, err := s.Store.AppLive(ctx, appID)
	if err != nil {
		return nil, err
	}
	if !live {
		return nil, env.ErrAppGone
	}
	b, err := s.Keyring.Decrypt(ctx, sealed, keyID, env.SnapshotAAD(appID, deployID))
	if errors.Is(err, env.ErrDecrypt) || errors.Is(err, env.ErrUnknownKey) {
		return nil, env.ErrSealed
	}
	if err != nil {
		return nil, err
	}
	defer clear(b)
	var snap snapshot
	if err := json.Unmarshal(b, &snap); err != nil || snap.Version != 1 {
		return nil, env.ErrSealed
	}
	return snap.Vars, nil
}
