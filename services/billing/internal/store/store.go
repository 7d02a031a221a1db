// Package store keeps billing's records in Postgres, in billing's own schema. It implements
// usecase.Store and decides nothing: Postgres conditions become the domain's errors here.
package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/billing/internal/usecase"
)

// Store reads account plans; its writes run in a transaction (Tx), so that the outbox event
// announcing a change commits together with it.
type Store struct {
	pool *pgxpool.Pool
}

var _ usecase.Store = (*Store)(nil)

// New wraps a pool connected as billing's role.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// InTx runs fn in one transaction, committed when fn returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx usecase.Tx) error) error {
	return pgstore.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(Tx{tx: tx}) })
}

// Tx is usecase.Tx on one Postgres transaction.
type Tx struct {
	tx pgx.Tx
}

var _ usecase.Tx = Tx{}

// Bind is the store inside tx, the transaction a bus consumer opened for a message, so the
// use case's effects commit with the record that the message was processed.
func Bind(tx bus.Tx) usecase.Tx { return Tx{tx: tx.Pgx()} }

// Publish writes msg to billing's outbox in the transaction.
func (t Tx) Publish(ctx context.Context, routingKey string, msg proto.Message) error {
	return bus.Publish(ctx, t.tx, routingKey, msg)
}

// UnsentEvents counts outbox rows not yet published. The outbox is the bus's table, created in
// billing's schema by bus.Migrations; the operator command waits for this to reach zero.
func (s *Store) UnsentEvents(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE sent_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count unsent events: %w", err)
	}
	return n, nil
}
