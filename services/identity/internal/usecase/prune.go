package usecase

import (
	"context"

	"tori.dev/services/identity/internal/auth"
)

// PruneSignIns deletes the sign-in codes, grants and sessions that ended more than
// auth.EndedKept ago, and says how many rows went. API tokens stay: a revoked one is still
// worth recognising in an audit.
func (s *Service) PruneSignIns(ctx context.Context) (int64, error) {
	return s.store.DeleteEndedBefore(ctx, s.now().Add(-auth.EndedKept))
}
