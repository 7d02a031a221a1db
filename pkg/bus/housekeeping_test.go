package bus_test

import (
	"context"
	"testing"
	"time"

	"tori.dev/pkg/bus"
)

func TestPruneRemovesOldRowsKeepsUnsent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	if err := publishEvents(ctx, pool, "test.prune.event", 1, 4, 4); err != nil {
		t.Fatal(err)
	}
	exec := func(sql string) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	// 1 and 2 sent long ago, 3 sent recently, 4 never sent (and created long ago).
	exec(`UPDATE outbox SET sent_at = now() - interval '2 days' WHERE seq IN (SELECT seq FROM outbox ORDER BY seq LIMIT 2)`)
	exec(`UPDATE outbox SET sent_at = now() - interval '1 hour' WHERE seq = (SELECT seq FROM outbox ORDER BY seq OFFSET 2 LIMIT 1)`)
	exec(`UPDATE outbox SET created_at = now() - interval '30 days' WHERE sent_at IS NULL`)
	exec(`INSERT INTO processed_messages (queue, message_id, processed_at) VALUES
		('q', 'old', now() - interval '8 days'),
		('q', 'older', now() - interval '30 days'),
		('q', 'recent', now() - interval '1 day')`)

	n, err := bus.Prune(ctx, pool, 24*time.Hour, 7*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("pruned %d rows, want 4", n)
	}
	var sent, unsent, processed int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE sent_at IS NOT NULL), count(*) FILTER (WHERE sent_at IS NULL) FROM outbox`).Scan(&sent, &unsent); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM processed_messages WHERE message_id = 'recent'`).Scan(&processed); err != nil {
		t.Fatal(err)
	}
	var left int
	pool.QueryRow(ctx, `SELECT count(*) FROM processed_messages`).Scan(&left)
	if sent != 1 || unsent != 1 || processed != 1 || left != 1 {
		t.Fatalf("left: %d sent, %d unsent, processed %d (recent %d); want 1, 1, 1", sent, unsent, left, processed)
	}
}

func TestHousekeepPrunesAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	if _, err := pool.Exec(ctx, `INSERT INTO processed_messages (queue, message_id, processed_at) VALUES ('q', 'old', now() - interval '8 days')`); err != nil {
		t.Fatal(err)
	}
	run(t, "housekeep", func(ctx context.Context) error { return bus.Housekeep(ctx, pool, time.Hour, testLogger()) })
	eventually(t, 5*time.Second, "old id pruned", func() bool {
		var n int
		pool.QueryRow(ctx, `SELECT count(*) FROM processed_messages`).Scan(&n)
		return n == 0
	})
}
