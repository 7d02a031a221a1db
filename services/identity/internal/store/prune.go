package store

import (
	"context"
	"time"
)

// DeleteEndedBefore deletes the magic links, authorization codes, device grants, sessions
// and invitations that expired, were used or were revoked before cutoff.
func (s *Store) DeleteEndedBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for _, q := range []string{
		`DELETE FROM magic_links WHERE expires_at < $1`,
		`DELETE FROM auth_codes WHERE expires_at < $1`,
		`DELETE FROM device_grants WHERE expires_at < $1`,
		`DELETE FROM sessions WHERE expires_at < $1 OR revoked_at < $1`,
		`DELETE FROM invitations WHERE expires_at < $1 OR revoked_at < $1 OR accepted_at < $1`,
	} {
		tag, err := s.pool.Exec(ctx, q, cutoff)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
	}
	return total, nil
}
