package pgstore

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// A Pending write rides along with the first transaction InTx commits under its context: a
// request's audit entry is written in the same transaction as the request's change, so no
// change can commit without it, whichever use case and store method made the change.
type Pending struct {
	mu    sync.Mutex
	write func(ctx context.Context, tx pgx.Tx) error
	busy  bool // a transaction holding the write is open
	done  bool // a transaction holding the write committed
}

type pendingKey struct{}

// WithPending returns ctx carrying write, to be run inside the first transaction InTx (or
// Apply) commits under it, and the Pending to ask later whether that happened.
func WithPending(ctx context.Context, write func(ctx context.Context, tx pgx.Tx) error) (context.Context, *Pending) {
	p := &Pending{write: write}
	return context.WithValue(ctx, pendingKey{}, p), p
}

// Done reports whether a transaction holding the write has committed.
func (p *Pending) Done() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// claim takes the write for one transaction: false when another holds it or it is done.
func (p *Pending) claim() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy || p.done {
		return false
	}
	p.busy = true
	return true
}

func (p *Pending) release(committed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = false
	p.done = p.done || committed
}

// Apply runs ctx's pending write inside tx when no other transaction has it, and returns
// what to call once tx has ended (committed or not). A store whose transactions do not go
// through InTx calls it before its commit.
func Apply(ctx context.Context, tx pgx.Tx) (finish func(committed bool), err error) {
	p, _ := ctx.Value(pendingKey{}).(*Pending)
	if p == nil || !p.claim() {
		return func(bool) {}, nil
	}
	if err := p.write(ctx, tx); err != nil {
		p.release(false)
		return func(bool) {}, err
	}
	return p.release, nil
}

// WithoutPending returns ctx without its pending write, for a transaction that is not the
// request's change (a copy kept on the way, a slot reserved before an upload): committing
// the change's entry there would record a change that may yet fail.
func WithoutPending(ctx context.Context) context.Context {
	return context.WithValue(ctx, pendingKey{}, (*Pending)(nil))
}
