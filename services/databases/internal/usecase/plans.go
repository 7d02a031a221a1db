package usecase

import (
	"context"

	"tori.dev/services/databases/internal/database"
)

// PlanChanged gives the account's databases the new plan's limits, in tx, and sends each
// zone the database's create command again with them: the zone applies a command it has
// taken before as an update (the role's CONNECTION LIMIT, the pool, the cap). An older plan
// event than the limits on record changes nothing.
func (s *Databases) PlanChanged(ctx context.Context, tx Tx, accountID string, l database.Limits) error {
	dbs, err := tx.LockByAccount(ctx, accountID)
	if err != nil {
		return err
	}
	for _, d := range dbs {
		if !d.Limits.Follows(l.Version, d.Status) {
			continue
		}
		d.Limits = l
		d.UpdatedAt = s.now().UTC()
		if err := tx.Update(ctx, d); err != nil {
			return err
		}
		if err := s.requested(ctx, tx, d); err != nil {
			return err
		}
		s.log.InfoContext(ctx, "database follows a plan change", "database_id", d.ID, "connections", l.Connections, "max_bytes", l.MaxBytes)
	}
	return nil
}
