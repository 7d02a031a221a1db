package store

import (
	"context"

	"tori.dev/contract/access"
)

// MembershipsOf is every team userID belongs to, personal first, then by slug: what
// introspection signs onto a session's or full token's requests.
//
// The teams work (branch t39-id-teams) brings its own; when both meet, keep one.
func (r *repo) MembershipsOf(ctx context.Context, userID string) ([]access.Membership, error) {
	rows, err := r.q.Query(ctx, memberSelect+`WHERE m.user_id = $1 ORDER BY t.personal DESC, t.slug`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []access.Membership{}
	for rows.Next() {
		m, err := scanMembership(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
