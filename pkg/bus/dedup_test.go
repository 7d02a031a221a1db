package bus

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// recordingTx is a transaction whose processed_messages already holds the ids in seen; only
// Exec, which recordProcessed uses, is implemented.
type recordingTx struct {
	pgx.Tx
	seen map[string]bool
	err  error
}

func (tx *recordingTx) Exec(_ context.Context, _ string, args ...any) (pgconn.CommandTag, error) {
	if tx.err != nil {
		return pgconn.CommandTag{}, tx.err
	}
	id := args[1].(string)
	if tx.seen[id] {
		return pgconn.NewCommandTag("INSERT 0 0"), nil
	}
	tx.seen[id] = true
	return pgconn.NewCommandTag("INSERT 0 1"), nil
}

func TestDeduplicatedRunsTheHandlerOncePerID(t *testing.T) {
	ctx := context.Background()
	calls := map[string]int{}
	h := deduplicated("q", func(_ context.Context, _ Tx, d Delivery) error { calls[d.ID]++; return nil })
	tx := &recordingTx{seen: map[string]bool{"old": true}}
	for _, id := range []string{"a", "a", "old", "b"} {
		if err := h(ctx, TxOf(tx), Delivery{ID: id}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if calls["a"] != 1 || calls["b"] != 1 || calls["old"] != 0 {
		t.Fatalf("handler calls %v, want a and b once and the event processed before never", calls)
	}

	// The record failing is the bus's trouble, retried without using an attempt.
	broken := &recordingTx{err: errors.New("connection reset")}
	err := h(ctx, TxOf(broken), Delivery{ID: "c"})
	var ie infraError
	if !errors.As(err, &ie) || calls["c"] != 0 {
		t.Fatalf("err = %v, calls %d: want an infraError and no handler call", err, calls["c"])
	}
}
