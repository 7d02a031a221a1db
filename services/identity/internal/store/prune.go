package store

import (
	"context"
	"time"
)

// pruneGrace keeps spent and expired rows a day past their end, so a late poll still gets
// the precise answer (expired_token, access_denied) rather than an unknown-code one.
const pruneGrace = 24 * time.Hour

// Prune deletes sign-in codes, grants and sessions that ended more than a day before now.
// API tokens stay: a revoked one is still worth recognising in an audit.
func (s *Store) Prune(ctx context.Context, now time.Time) (int64, error) {
	cutoff := now.Add(-pruneGrace)
	var total int64
	for _, q := range []string{
		`DELETE FROM magic_links WHERE expires_at < $1`,
		`DELETE FROM auth_codes WHERE expires_at < $1`,
		`DELETE FROM device_grants WHERE expires_at < $1`,
		`DELETE FROM sessions WHERE expires_at < $1 OR revoked_at < $1`,
	} {
		tag, err := s.pool.Exec(ctx, q, cutoff)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
	}
	return total, nil
}
