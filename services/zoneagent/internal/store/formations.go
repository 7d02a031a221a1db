package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/zoneagent/internal/revision"
)

// SetFormation keeps f as the formation of deployID unless one as new is kept; it reports
// whether f was taken.
func (t Tx) SetFormation(ctx context.Context, appID, deployID string, f revision.Formation) (bool, error) {
	q := f.Quantities
	if q == nil {
		q = map[string]int64{}
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO formations (deploy_id, app_id, quantities, generation) VALUES ($1, $2, $3, $4)
		ON CONFLICT (deploy_id) DO UPDATE SET quantities = EXCLUDED.quantities, generation = EXCLUDED.generation, updated_at = now()
		WHERE formations.generation < EXCLUDED.generation`, deployID, appID, q, f.Generation)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// Formation is the formation kept for deployID; none kept is the zero Formation (one web).
func (t Tx) Formation(ctx context.Context, deployID string) (revision.Formation, error) {
	return scanFormation(t.tx.QueryRow(ctx, `SELECT quantities, generation FROM formations WHERE deploy_id = $1`, deployID))
}

// Formation is Tx.Formation outside a transaction.
func (s *Store) Formation(ctx context.Context, deployID string) (revision.Formation, error) {
	return scanFormation(s.pool.QueryRow(ctx, `SELECT quantities, generation FROM formations WHERE deploy_id = $1`, deployID))
}

func scanFormation(row pgx.Row) (revision.Formation, error) {
	var f revision.Formation
	err := row.Scan(&f.Quantities, &f.Generation)
	if errors.Is(err, pgx.ErrNoRows) {
		return revision.Formation{}, nil
	}
	if err != nil {
		return revision.Formation{}, fmt.Errorf("store: formation: %w", err)
	}
	return f, nil
}
