package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Open connects a pool to url and checks the connection. Of the options it heeds the pool's
// size and its sessions' settings: migrations are Setup's.
func Open(ctx context.Context, url string, opts ...Option) (*pgxpool.Pool, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return open(ctx, url, o)
}

func open(ctx context.Context, url string, o options) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: parse database url: %w", err)
	}
	if o.maxConns > 0 {
		cfg.MaxConns = o.maxConns
	}
	for name, value := range o.settings {
		cfg.ConnConfig.RuntimeParams[name] = value
	}
	cfg.ConnConfig.Tracer = newQueryTracer() // trace.go
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: ping: %w", err)
	}
	return pool, nil
}

// Beginner is what InTx needs: a pool, a connection or an outer transaction.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// InTx runs fn in a transaction, committing when fn returns nil and rolling back otherwise.
// The context's pending write (WithPending), when no transaction has taken it yet, commits
// with this one.
func InTx(ctx context.Context, db Beginner, fn func(tx pgx.Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: begin: %w", err)
	}
	err = fn(tx)
	finish := func(bool) {}
	if err == nil {
		finish, err = Apply(ctx, tx)
	}
	if err != nil {
		if rbErr := tx.Rollback(context.WithoutCancel(ctx)); rbErr != nil && !errors.Is(rbErr, pgx.ErrTxClosed) {
			return errors.Join(err, fmt.Errorf("pgstore: rollback: %w", rbErr))
		}
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		finish(false)
		return fmt.Errorf("pgstore: commit: %w", err)
	}
	finish(true)
	return nil
}

// Option tunes Setup.
type Option func(*options)

type options struct {
	sets     []MigrationSet
	maxConns int32
	settings map[string]string
}

// WithMigrations runs sets, in order, in the service's schema once the pool is open.
func WithMigrations(sets ...MigrationSet) Option {
	return func(o *options) { o.sets = append(o.sets, sets...) }
}

// WithMaxConns sizes the pool; the default is pgxpool's (the larger of 4 and the CPU count).
func WithMaxConns(n int32) Option {
	return func(o *options) { o.maxConns = n }
}

// WithSessionSetting starts every session of the pool with the server setting name at value
// (sent at connect, as libpq's options=-c would).
func WithSessionSetting(name, value string) Option {
	return func(o *options) {
		if o.settings == nil {
			o.settings = map[string]string{}
		}
		o.settings[name] = value
	}
}

// Setup is the start-up sequence of every service: make sure the database, the service's
// role and schema exist (as the admin role), open a pool as the service's own role, and run
// the service's migrations. The admin connection is not kept.
func Setup(ctx context.Context, adminURL string, svc Service, opts ...Option) (*pgxpool.Pool, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := EnsureDatabase(ctx, adminURL); err != nil {
		return nil, err
	}
	if err := EnsureService(ctx, adminURL, svc); err != nil {
		return nil, err
	}
	url, err := ServiceURL(adminURL, svc)
	if err != nil {
		return nil, err
	}
	pool, err := open(ctx, url, o)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, pool, svc.Schema, o.sets...); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}
