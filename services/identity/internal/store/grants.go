package store

import (
	"context"
	"time"

	"tori.dev/services/identity/internal/auth"
)

func (r *repo) CreateDeviceGrant(ctx context.Context, g auth.DeviceGrant) (bool, error) {
	tag, err := r.q.Exec(ctx, `INSERT INTO device_grants
		(id, device_code_hash, user_code_hash, client_name, status, interval_ms, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (user_code_hash) DO NOTHING`,
		g.ID, g.DeviceHash, g.UserHash, g.ClientName, string(g.Status), g.Interval.Milliseconds(), g.CreatedAt, g.ExpiresAt)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

const grantSelect = `SELECT id::text, device_code_hash, user_code_hash, client_name, status, interval_ms,
	created_at, expires_at, last_polled_at, coalesce(account_id::text, ''), coalesce(user_id::text, ''),
	decided_at, coalesce(token_id::text, '') FROM device_grants `

func (r *repo) lockGrant(ctx context.Context, where string, hash []byte) (auth.DeviceGrant, error) {
	var g auth.DeviceGrant
	var status string
	var intervalMS int64
	err := r.q.QueryRow(ctx, grantSelect+where+` FOR UPDATE`, hash).Scan(&g.ID, &g.DeviceHash, &g.UserHash,
		&g.ClientName, &status, &intervalMS, &g.CreatedAt, &g.ExpiresAt, &g.LastPolledAt, &g.AccountID,
		&g.UserID, &g.DecidedAt, &g.TokenID)
	g.Status = auth.GrantStatus(status)
	g.Interval = time.Duration(intervalMS) * time.Millisecond
	return g, notFound(err, auth.ErrNotFound)
}

func (r *repo) LockDeviceGrantByDeviceCode(ctx context.Context, hash []byte) (auth.DeviceGrant, error) {
	return r.lockGrant(ctx, `WHERE device_code_hash = $1`, hash)
}

func (r *repo) LockDeviceGrantByUserCode(ctx context.Context, hash []byte) (auth.DeviceGrant, error) {
	return r.lockGrant(ctx, `WHERE user_code_hash = $1`, hash)
}

func (r *repo) SaveDeviceGrant(ctx context.Context, g auth.DeviceGrant) error {
	_, err := r.q.Exec(ctx, `UPDATE device_grants SET status = $2, interval_ms = $3, last_polled_at = $4,
		account_id = nullif($5, '')::uuid, user_id = nullif($6, '')::uuid, decided_at = $7, token_id = nullif($8, '')::uuid
		WHERE id = $1`, g.ID, string(g.Status), g.Interval.Milliseconds(), g.LastPolledAt, g.AccountID, g.UserID,
		g.DecidedAt, g.TokenID)
	return err
}

func (r *repo) CreateAuthCode(ctx context.Context, c auth.AuthCode) error {
	_, err := r.q.Exec(ctx, `INSERT INTO auth_codes
		(code_hash, account_id, user_id, redirect_uri, code_challenge, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.Hash, c.AccountID, c.UserID, c.RedirectURI, c.Challenge, c.CreatedAt, c.ExpiresAt)
	return err
}

func (r *repo) LockAuthCode(ctx context.Context, hash []byte) (auth.AuthCode, error) {
	var c auth.AuthCode
	err := r.q.QueryRow(ctx, `SELECT code_hash, account_id::text, user_id::text, redirect_uri, code_challenge,
		created_at, expires_at, used_at FROM auth_codes WHERE code_hash = $1 FOR UPDATE`, hash).
		Scan(&c.Hash, &c.AccountID, &c.UserID, &c.RedirectURI, &c.Challenge, &c.CreatedAt, &c.ExpiresAt, &c.UsedAt)
	return c, notFound(err, auth.ErrNotFound)
}

func (r *repo) SaveAuthCode(ctx context.Context, c auth.AuthCode) error {
	_, err := r.q.Exec(ctx, `UPDATE auth_codes SET used_at = $2 WHERE code_hash = $1`, c.Hash, c.UsedAt)
	return err
}
