package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DeleteAppEntries removes every entry of appID, batch rows per statement and partition, each
// statement its own short transaction: a busy app's millions of rows never make one long
// transaction that holds locks and keeps vacuum from reclaiming space. Returns how many went.
func (s *Store) DeleteAppEntries(ctx context.Context, appID string, batch int) (int64, error) {
	// A deleted app's drains go first, backlogs and all (senders skip deleted apps already).
	if _, err := s.pool.Exec(ctx, `DELETE FROM drains WHERE app_id = $1`, appID); err != nil {
		return 0, fmt.Errorf("store: delete drains of %s: %w", appID, err)
	}
	days, err := s.Partitions(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, day := range days {
		table := pgx.Identifier{partitionName(day)}.Sanitize()
		// Addressing rows by ctid within one partition turns each batch into a TID scan.
		stmt := `DELETE FROM ` + table + ` WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM ` + table + ` WHERE app_id = $1 LIMIT $2))`
		for {
			tag, err := s.pool.Exec(ctx, stmt, appID, batch)
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "42P01" {
				break // retention dropped the partition meanwhile
			}
			if err != nil {
				return total, fmt.Errorf("store: delete entries of %s: %w", appID, err)
			}
			total += tag.RowsAffected()
			if tag.RowsAffected() < int64(batch) {
				break
			}
		}
	}
	// The app's metrics go with its lines, before the cleanup is confirmed.
	if _, err := s.DeleteAppMetrics(ctx, appID); err != nil {
		return total, err
	}
	return total, nil
}
