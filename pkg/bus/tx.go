package bus

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Tx is the transaction a consumer's handler runs in, opaque to the handler: the service's
// store binds it to the use case's transaction with its Bind, so only the store knows the
// database driver, and a service's busapi package does not import it.
type Tx struct {
	tx    pgx.Tx
	after *[]func() // nil: a transaction of the caller's own (TxOf)
}

// TxOf is tx as a Tx: for a test that calls a handler in a transaction of its own.
func TxOf(tx pgx.Tx) Tx { return Tx{tx: tx} }

// Pgx is the driver's transaction underneath, for a store's Bind.
func (t Tx) Pgx() pgx.Tx { return t.tx }

// AfterCommit has fn run once the handler's transaction has committed, and never when it
// rolls back: a handler that records work and wakes a worker for it wakes the worker when
// the record can be read, not before (where the worker would find nothing and wait for its
// next poll). In a transaction TxOf made, whose commit the bus does not see, fn runs at once.
func (t Tx) AfterCommit(fn func()) {
	if t.after == nil {
		fn()
		return
	}
	*t.after = append(*t.after, fn)
}

// committing makes tx the bus's Tx for handlers and returns how to commit it: the commit,
// then what the handlers asked to run after it.
func committing(tx pgx.Tx) (Tx, func(context.Context) error) {
	var after []func()
	return Tx{tx: tx, after: &after}, func(ctx context.Context) error {
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		for _, fn := range after {
			fn()
		}
		return nil
	}
}
