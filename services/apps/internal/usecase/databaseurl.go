package usecase

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"tori.dev/services/apps/internal/env"
)

// DatabaseURLs keeps an app's DATABASE_URL in step with its managed database, sealed like
// every value. Each runs in the transaction of the bus message that caused it.
type DatabaseURLs struct {
	Keyring Keyring
	Now     func() time.Time
	Log     *slog.Logger
}

// current is the app's DATABASE_URL in plaintext, for as long as the rule needs it.
func (d DatabaseURLs) current(ctx context.Context, tx Tx, appID, key string) (string, bool, error) {
	vars, err := tx.Vars(ctx, appID)
	if err != nil {
		return "", false, err
	}
	for _, v := range vars {
		if v.Key != key {
			continue
		}
		pt, err := d.Keyring.Decrypt(ctx, v.Ciphertext, v.KeyID, env.AAD(appID, v.Key))
		if err != nil {
			return "", false, fmt.Errorf("env: open %s of app %s: %w", v.Key, appID, err)
		}
		return string(pt), true, nil
	}
	return "", false, nil
}

// Ready writes key (DATABASE_URL, or DATABASE_RESTORE_URL for a restore) for the app's ready
// database: set when absent, rewritten when it names the pooler (keeping the customer's query
// parameters), left alone when it names another host. A deleted app gets nothing.
func (d DatabaseURLs) Ready(ctx context.Context, tx Tx, appID, key string, c env.DatabaseCredentials) error {
	live, err := tx.ShareLiveApp(ctx, appID)
	if err != nil || !live {
		return err
	}
	// Locks the app's variables, so a customer's edit and this rewrite do not cross.
	if _, _, err := tx.LockEnv(ctx, appID, key); err != nil {
		return err
	}
	cur, has, err := d.current(ctx, tx, appID, key)
	if err != nil {
		return err
	}
	value, write := env.RewriteDatabaseURL(cur, has, c)
	if !write {
		d.Log.InfoContext(ctx, "the database's variable names another host; left alone", "app_id", appID, "key", key)
		return nil
	}
	ct, keyID, err := d.Keyring.Encrypt(ctx, []byte(value), env.AAD(appID, key))
	if err != nil {
		return fmt.Errorf("env: seal: %w", err)
	}
	now := stamp(d.Now())
	if _, err := tx.UpsertVar(ctx, appID, env.Sealed{Key: key, Ciphertext: ct, KeyID: keyID, CreatedAt: now, UpdatedAt: now}); err != nil {
		return err
	}
	d.Log.InfoContext(ctx, "database variable written", "app_id", appID, "key", key)
	return nil
}

// Deleted removes key once the zone confirmed the database gone, when it is that database's
// URL (its role); a URL the customer pointed elsewhere stays.
func (d DatabaseURLs) Deleted(ctx context.Context, tx Tx, appID, key, role string) error {
	if _, _, err := tx.LockEnv(ctx, appID, key); err != nil {
		return err
	}
	cur, has, err := d.current(ctx, tx, appID, key)
	if err != nil || !has || !env.RemovesDatabaseURL(cur, role) {
		return err
	}
	if err := tx.DeleteVar(ctx, appID, key); err != nil {
		return err
	}
	d.Log.InfoContext(ctx, "database variable removed with its database", "app_id", appID, "key", key)
	return nil
}
