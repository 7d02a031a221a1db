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
// time: neither another app's nor one waiting in quarantine for its last owner's processes
// and files to be gone. Two agents racing for the same free uid meet the unique index; the
// loser retries.
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
			WITH taken AS (SELECT uid FROM app_uids UNION ALL SELECT uid FROM app_uid_quarantine)
			INSERT INTO app_uids (app_id, uid)
			SELECT $1, c FROM (
				SELECT $2::bigint AS c WHERE NOT EXISTS (SELECT 1 FROM taken WHERE uid = $2)
				UNION ALL
				SELECT u.uid + 1 FROM taken u
				WHERE u.uid >= $2 AND u.uid < $3 AND NOT EXISTS (SELECT 1 FROM taken n WHERE n.uid = u.uid + 1)
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

// freeUIDStatement takes the uid from a deleted app and puts it in quarantine (with the
// deletion's record, Tx.DeleteApp): no app gets it again until ReleaseUID. One statement, so
// no reader ever sees the uid in neither table.
const freeUIDStatement = `
	WITH freed AS (DELETE FROM app_uids WHERE app_id = $1 RETURNING uid)
	INSERT INTO app_uid_quarantine (uid, last_app) SELECT uid, $1 FROM freed
	ON CONFLICT (uid) DO NOTHING`

// QuarantinedUIDs are the freed uids still waiting, each with its last owner's app id.
func (s *Store) QuarantinedUIDs(ctx context.Context) (map[uint32]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT uid, last_app FROM app_uid_quarantine`)
	if err != nil {
		return nil, err
	}
	out := map[uint32]string{}
	var uid int64
	var app string
	_, err = pgx.ForEachRow(rows, []any{&uid, &app}, func() error {
		out[uint32(uid)] = app
		return nil
	})
	return out, err
}

// ReleaseUID ends a uid's quarantine: nothing of its last owner is left, and it may be
// given to another app.
func (s *Store) ReleaseUID(ctx context.Context, uid uint32) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM app_uid_quarantine WHERE uid = $1`, int64(uid))
	return err
}
