package store

import "context"

// AppUIDs are the uids the given apps hold, without allocating any: an app that has not run
// yet has none.
func (s *Store) AppUIDs(ctx context.Context, appIDs []string) (map[string]uint32, error) {
	out := map[string]uint32{}
	if len(appIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT app_id, uid FROM app_uids WHERE app_id = ANY($1)`, appIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var app string
		var uid int64
		if err := rows.Scan(&app, &uid); err != nil {
			return nil, err
		}
		out[app] = uint32(uid)
	}
	return out, rows.Err()
}
