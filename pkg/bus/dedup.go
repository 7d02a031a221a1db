package bus

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// deduplicated is h run only for an event not recorded in tx's processed_messages before, and
// recorded there now, so that the record commits (or rolls back) with h's effect. A
// redelivered event commits nothing else and counts as done.
func deduplicated(queue string, h TxHandler) TxHandler {
	return func(ctx context.Context, tx Tx, d Delivery) error {
		fresh, err := recordProcessed(ctx, tx.Pgx(), queue, d.ID)
		if err != nil || !fresh {
			return err
		}
		return h(ctx, tx, d)
	}
}

// recordProcessed notes the message in tx; false if it was processed before. It waits on a
// concurrent transaction holding the same id, so two copies in flight at once still have
// one effect.
func recordProcessed(ctx context.Context, tx pgx.Tx, queue, id string) (bool, error) {
	tag, err := tx.Exec(ctx,
		`INSERT INTO processed_messages (queue, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		queue, id)
	if err != nil {
		return false, infraError{fmt.Errorf("bus: record processed: %w", err)}
	}
	return tag.RowsAffected() == 1, nil
}

// recordProcessedAll is recordProcessed for many ids in one statement, one round trip instead
// of one each; it returns the ids recorded now. Its locks are taken in the order of ids.
func recordProcessedAll(ctx context.Context, tx pgx.Tx, queue string, ids []string) (map[string]bool, error) {
	rows, _ := tx.Query(ctx, `
		INSERT INTO processed_messages (queue, message_id)
		SELECT $1, id FROM unnest($2::text[]) WITH ORDINALITY AS m(id, n) ORDER BY n
		ON CONFLICT DO NOTHING
		RETURNING message_id`, queue, ids)
	recorded, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, infraError{fmt.Errorf("bus: record processed: %w", err)}
	}
	fresh := make(map[string]bool, len(recorded))
	for _, id := range recorded {
		fresh[id] = true
	}
	return fresh, nil
}
