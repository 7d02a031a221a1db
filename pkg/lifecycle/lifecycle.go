// Package lifecycle runs the long-lived parts of one service process together (its HTTP
// server, outbox relay, consumers, background loops): the first part to fail stops them all,
// and so does a part that stops by itself while the process should still be running, since
// a service missing a consumer or its relay is broken even when nothing returned an error.
package lifecycle

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// Group is a set of parts sharing one context.
type Group struct {
	g   *errgroup.Group
	ctx context.Context
}

// New returns a group whose context ends when ctx does or when any part fails.
func New(ctx context.Context) (*Group, context.Context) {
	g, gctx := errgroup.WithContext(ctx)
	return &Group{g: g, ctx: gctx}, gctx
}

// Go runs a part named name until the group's context ends. A part returning while the
// context is still live is a failure, even with a nil error; a part returning after it has
// ended is a clean stop, whatever it returns.
func (g *Group) Go(name string, part func(ctx context.Context) error) {
	g.g.Go(func() error {
		err := part(g.ctx)
		if g.ctx.Err() != nil {
			return nil
		}
		if err == nil {
			return fmt.Errorf("%s stopped unexpectedly", name)
		}
		return fmt.Errorf("%s: %w", name, err)
	})
}

// Wait waits for every part and returns the first failure.
func (g *Group) Wait() error { return g.g.Wait() }
