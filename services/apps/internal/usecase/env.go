package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"tori.dev/pkg/accessgate"
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
	// Hosting tells whether a zone hosts a deploy now, before a snapshot opens for it.
	Hosting HostingChecker
	Now     func() time.Time
}

// HostingChecker asks the deploys service, which owns deploys and knows each app's zone.
type HostingChecker interface {
	// Hosts reports whether zone hosts the app's deploy now (building, releasing or live
	// there) and which deploy's snapshot it uses.
	Hosts(ctx context.Context, zone, appID, deployID string) (envDeployID string, hosted bool, err error)
}

// Sealed is one sealed snapshot and the deploy it was sealed for.
type Sealed struct {
	DeployID string
	Sealed   []byte
	KeyID    string
}

// OpenForZone returns a snapshot's variables to the zone starting revisionDeployID, only
// while that zone hosts it and only the snapshot that deploy uses: a zone cannot open
// another zone's apps, nor an app's deploys that ended.
func (s *Env) OpenForZone(ctx context.Context, zone, appID, revisionDeployID string, snap Sealed) (map[string]string, error) {
	if revisionDeployID == "" {
		revisionDeployID = snap.DeployID
	}
	envDeploy, hosted, err := s.Hosting.Hosts(ctx, zone, appID, revisionDeployID)
	if err != nil {
		return nil, err
	}
	if !hosted || envDeploy != snap.DeployID {
		return nil, env.ErrNotHosted
	}
	return s.open(ctx, appID, snap)
}

// Same reports whether two snapshots of the app hold the same variables, for the deploys
// service, which so never sees a value.
func (s *Env) Same(ctx context.Context, appID string, a, b Sealed) (bool, error) {
	va, err := s.open(ctx, appID, a)
	if err != nil {
		return false, err
	}
	vb, err := s.open(ctx, appID, b)
	if err != nil {
		return false, err
	}
	return maps.Equal(va, vb), nil
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
	accessgate.Annotate(ctx, "keys", key)
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

// ApplyFor sets and removes several variables of app (already found to be the caller's)
// in one transaction: every one of them, or, on any refusal, none. A name to remove that the
// app does not hold is no change, so the same change sent twice gives the same result. It
// returns the app's variables afterwards, masked, sorted by name.
func (s *Env) ApplyFor(ctx context.Context, app apps.App, c env.Change) ([]env.Masked, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	// Sealed before the transaction: a keyring round trip (Vault) holds no lock.
	now := stamp(s.Now())
	sealed := make([]env.Sealed, 0, len(c.Set))
	for _, k := range c.SetKeys() {
		ct, keyID, err := s.Keyring.Encrypt(ctx, []byte(c.Set[k]), env.AAD(app.ID, k))
		if err != nil {
			return nil, fmt.Errorf("env: seal: %w", err)
		}
		sealed = append(sealed, env.Sealed{Key: k, Ciphertext: ct, KeyID: keyID, CreatedAt: now, UpdatedAt: now})
	}
	var after []env.Sealed
	accessgate.Annotate(ctx, "keys", strings.Join(c.Keys(), ","))
	err := s.Store.InTx(ctx, func(tx Tx) error {
		live, err := tx.ShareLiveApp(ctx, app.ID)
		if err != nil {
			return err
		}
		if !live {
			return apps.ErrNotFound // deleted between the lookup and the write
		}
		held, err := tx.LockEnvKeys(ctx, app.ID)
		if err != nil {
			return err
		}
		if !env.MayApply(c.Count(held)) {
			return env.ErrVarLimit
		}
		for _, v := range sealed {
			if _, err := tx.UpsertVar(ctx, app.ID, v); err != nil {
				return err
			}
		}
		for _, k := range c.Unset {
			if !held[k] {
				continue
			}
			if err := tx.DeleteVar(ctx, app.ID, k); err != nil {
				return err
			}
			held[k] = false // a name listed twice is removed once
		}
		after, err = tx.Vars(ctx, app.ID)
		return err
	})
	if errors.Is(err, env.ErrVarLimit) {
		return nil, s.varLimit(ctx, app.AccountID)
	}
	if err != nil {
		return nil, err
	}
	return s.mask(ctx, app.ID, after)
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
	return s.mask(ctx, app.ID, vars)
}

// mask opens each stored value just long enough to mask it.
func (s *Env) mask(ctx context.Context, appID string, vars []env.Sealed) ([]env.Masked, error) {
	out := make([]env.Masked, 0, len(vars))
	for _, v := range vars {
		// The mask needs the value's length and first characters; the plaintext lives only
		// for this line.
		pt, err := s.Keyring.Decrypt(ctx, v.Ciphertext, v.KeyID, env.AAD(appID, v.Key))
		if err != nil {
			return nil, fmt.Errorf("env: open %s of app %s: %w", v.Key, appID, err)
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
	accessgate.Annotate(ctx, "keys", key)
	// In a transaction of its own, so the request's audit entry commits with the removal.
	return s.Store.InTx(ctx, func(tx Tx) error { return tx.DeleteVar(ctx, app.ID, key) })
}

// snapshot is the plaintext inside a sealed snapshot; it exists only in memory.
type snapshot struct {
	Version int               `json:"v"`
	Vars    map[string]string `json:"vars"`
}

// Snapshot seals all of an app's current variables for one deploy. The result opens only
// for that app and deploy, so a deploy cannot start with another's environment.
func (s *Env) Snapshot(ctx context.Context, appID, deployID string) (sealed []byte, keyID string, count int, err error) {
	return s.SnapshotWith(ctx, appID, deployID, SnapshotOptions{})
}

// SnapshotOptions shape a preview's snapshot (issue 40).
type SnapshotOptions struct {
	// Overrides are set over the app's variables (a preview's env); each name and value is
	// checked as a variable's, so a refused one seals nothing.
	Overrides map[string]string
	// Preview adds TORI_PREVIEW=1.
	Preview bool
	// WithoutDatabase leaves out DATABASE_URL and DATABASE_RESTORE_URL (database: none), so a
	// preview never reaches the production database unless asked.
	WithoutDatabase bool
}

// The variables a preview's snapshot adds or drops.
const (
	previewVar = "TORI_PREVIEW"
)

var databaseVars = []string{"DATABASE_URL", "DATABASE_RESTORE_URL"}

// SnapshotWith is Snapshot shaped by opts.
func (s *Env) SnapshotWith(ctx context.Context, appID, deployID string, opts SnapshotOptions) (sealed []byte, keyID string, count int, err error) {
	for k, v := range opts.Overrides {
		if !env.ValidKey(k) {
			return nil, "", 0, env.ErrInvalidKey
		}
		if err := env.CheckValue(v); err != nil {
			return nil, "", 0, err
		}
	}
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
	snap := snapshot{Version: 1, Vars: make(map[string]string, len(vars)+len(opts.Overrides)+1)}
	defer clear(snap.Vars)
	for _, v := range vars {
		pt, err := s.Keyring.Decrypt(ctx, v.Ciphertext, v.KeyID, env.AAD(appID, v.Key))
		if err != nil {
			return nil, "", 0, fmt.Errorf("env: open %s of app %s: %w", v.Key, appID, err)
		}
		snap.Vars[v.Key] = string(pt)
	}
	maps.Copy(snap.Vars, opts.Overrides)
	if opts.WithoutDatabase {
		for _, k := range databaseVars {
			delete(snap.Vars, k)
		}
	}
	if opts.Preview {
		snap.Vars[previewVar] = "1"
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
	return sealed, keyID, len(snap.Vars), nil
}

// open returns a sealed snapshot's variables.
func (s *Env) open(ctx context.Context, appID string, in Sealed) (map[string]string, error) {
	deployID, sealed, keyID := in.DeployID, in.Sealed, in.KeyID
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
