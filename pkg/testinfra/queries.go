package testinfra

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// QueryRecorder is a pgx tracer (pgxpool.Config.ConnConfig.Tracer) that keeps every statement
// a pool ran, with its arguments, so a test can ask Postgres how it plans a store's very
// statements (the EXPLAIN tests of issue 41).
type QueryRecorder struct {
	mu   sync.Mutex
	runs []Query
}

// Query is one statement a pool ran.
type Query struct {
	SQL  string
	Args []any
}

func (r *QueryRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, Query{SQL: d.SQL, Args: d.Args})
	return ctx
}

func (r *QueryRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Take returns the statements run since the last Take and forgets them.
func (r *QueryRecorder) Take() []Query {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.runs
	r.runs = nil
	return out
}
