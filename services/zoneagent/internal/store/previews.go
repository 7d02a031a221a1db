package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/zoneagent/internal/revision"
)

// TombstoneDays is how long a removed preview's host keeps answering 410 (docs/previews.md,
// "At the edge"); later it is an unknown host (404). It bounds the routing table the
// runtime sends its edge: tombstones do not pile up in it for ever.
const TombstoneDays = 30

const previewColumns = `preview_id, app_id, slug, deploy_id, kind, removed_at IS NOT NULL`

func scanPreview(row pgx.Row) (revision.Preview, error) {
	var p revision.Preview
	err := row.Scan(&p.ID, &p.AppID, &p.Slug, &p.DeployID, &p.Kind, &p.Removed)
	return p, err
}

// Preview loads a preview (live or a tombstone), locked; ok false when the zone has none.
func (t Tx) Preview(ctx context.Context, previewID string) (revision.Preview, bool, error) {
	p, err := scanPreview(t.tx.QueryRow(ctx, `SELECT `+previewColumns+` FROM previews WHERE preview_id = $1 FOR UPDATE`, previewID))
	if errors.Is(err, pgx.ErrNoRows) {
		return revision.Preview{}, false, nil
	}
	return p, err == nil, err
}

// SetPreview points a preview's host at a revision; a removed preview stays removed.
func (t Tx) SetPreview(ctx context.Context, p revision.Preview) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO previews (preview_id, app_id, slug, deploy_id, kind) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (preview_id) DO UPDATE SET slug = EXCLUDED.slug, deploy_id = EXCLUDED.deploy_id, kind = EXCLUDED.kind,
		updated_at = now() WHERE previews.removed_at IS NULL AND previews.app_id = EXCLUDED.app_id`,
		p.ID, p.AppID, p.Slug, p.DeployID, p.Kind)
	return err
}

// RemovePreview makes the preview a tombstone (recording one when the zone never served
// it, so a late activation cannot bring it up) and marks its revisions still being prepared
// or waiting discarded. It returns the preview as it was (its serving revision, if any).
// A preview of another app is left alone (found false).
func (t Tx) RemovePreview(ctx context.Context, appID, previewID, reason string) (revision.Preview, bool, error) {
	before, found, err := t.Preview(ctx, previewID)
	if err != nil {
		return revision.Preview{}, false, err
	}
	if found && before.AppID != appID {
		return revision.Preview{}, false, nil
	}
	// A preview the zone never served takes its slug from a revision of it, if any, so its
	// host's label can still be checked.
	if _, err := t.tx.Exec(ctx, `INSERT INTO previews (preview_id, app_id, removed_at, reason, slug) VALUES ($1, $2, now(), $3,
		coalesce((SELECT slug FROM revisions WHERE preview_id = $1 AND app_id = $2 LIMIT 1), ''))
		ON CONFLICT (preview_id) DO UPDATE SET removed_at = coalesce(previews.removed_at, now()),
		reason = CASE WHEN previews.removed_at IS NULL THEN EXCLUDED.reason ELSE previews.reason END, updated_at = now()`,
		previewID, appID, reason); err != nil {
		return revision.Preview{}, false, err
	}
	if _, err := t.tx.Exec(ctx, `UPDATE revisions SET discard_wanted = true, updated_at = now()
		WHERE preview_id = $1 AND app_id = $2 AND state IN ('pending', 'preparing', 'ready')`, previewID, appID); err != nil {
		return revision.Preview{}, false, err
	}
	return before, found, nil
}

// removeAppPreviews makes every preview of a deleted app a tombstone.
func (t Tx) removeAppPreviews(ctx context.Context, appID string) error {
	_, err := t.tx.Exec(ctx, `UPDATE previews SET removed_at = now(), reason = 'app_deleted', updated_at = now()
		WHERE app_id = $1 AND removed_at IS NULL`, appID)
	return err
}

// Previews lists the previews the edge answers for: the live ones and the tombstones of the
// last TombstoneDays.
func (s *Store) Previews(ctx context.Context) ([]revision.Preview, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+previewColumns+` FROM previews
		WHERE removed_at IS NULL OR removed_at > now() - make_interval(days => $1)`, TombstoneDays)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (revision.Preview, error) { return scanPreview(r) })
}
