package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNoFreeUID means every uid of the zone's range is taken.
var ErrNoFreeUID = errors.New("no free uid in the zone's range")

// AllocateUID returns the app's uid, giving it the lowest free one in [lo, hi] the first
// time. Two agents racing for the same free uid meet the unique index; the loser retries.
func (s *Store) AllocateUID(ctx context.Context, appID string, lo, hi uint32) (uint32, error) {
	for attempt := 0; attempt < 5; attempt++ {
		var uid int64
		err := s.pool.QueryRow(ctx, `SELECT uid FROM app_uids WHERE app_id = $1`, appID).Scan(&uid)
		if err == nil {
			return uint32(uid), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return 0, err
		}
		err = s.pool.QueryRow(ctx, `
			INSERT INTO app_uids (app_id, uid)
			SELECT $1, c FROM (
				SELECT $2::bigint AS c WHERE NOT EXISTS (SELECT 1 FROM app_uids WHERE uid = $2)
				UNION ALL
				SELECT u.uid + 1 FROM app_uids u
				WHERE u.uid >= $2 AND u.uid < $3 AND NOT EXISTS (SELECT 1 FROM app_uids n WHERE n.uid = u.uid + 1)
			) free ORDER BY c LIMIT 1
			ON CONFLICT (app_id) DO NOTHING
			RETURNING uid`, appID, int64(lo), int64(hi)).Scan(&uid)
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
			return uint32(uid), nil
		case errors.Is(err, pgx.ErrNoRows):
			// Either another agent recorded this app meanwhile (read it again) or the range
			// is full (the read finds nothing again and the insert selects nothing).
			var n int64
			if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM app_uids WHERE app_id = $1`, appID).Scan(&n); err != nil {
				return 0, err
			}
			if n == 0 {
				return 0, fmt.Errorf("%w (%d-%d)", ErrNoFreeUID, lo, hi)
			}
		case errors.As(err, &pgErr) && pgErr.Code == "23505":
			// Another app took that uid between the select and the insert.
		default:
			return 0, err
		}
	}
	return 0, errors.New("allocate uid: too much contention")
}

// FreeUID releases the app's uid.
func (s *Store) FreeUID(ctx context.Context, appID string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM app_uids WHERE app_id = $1`, appID)
	return err
}
