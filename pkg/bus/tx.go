package bus

import "github.com/jackc/pgx/v5"

// Tx is the transaction a consumer's handler runs in, opaque to the handler: the service's
// store binds it to the use case's transaction with its Bind, so only the store knows the
// database driver, and a service's busapi package does not import it.
type Tx struct{ tx pgx.Tx }

// TxOf is tx as a Tx: for the bus, and for a test that calls a handler in a transaction of
// its own.
func TxOf(tx pgx.Tx) Tx { return Tx{tx: tx} }

// Pgx is the driver's transaction underneath, for a store's Bind.
func (t Tx) Pgx() pgx.Tx { return t.tx }
