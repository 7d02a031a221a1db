package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAPartStoppingEarlyStopsTheGroup(t *testing.T) {
	for name, part := range map[string]func(context.Context) error{
		"fails":          func(context.Context) error { return errors.New("boom") },
		"returns nil":    func(context.Context) error { return nil },
		"returns ctxerr": func(context.Context) error { return context.Canceled },
	} {
		t.Run(name, func(t *testing.T) {
			g, ctx := New(context.Background())
			g.Go("waiter", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
			g.Go("consumer", part)
			err := g.Wait()
			if err == nil || !strings.HasPrefix(err.Error(), "consumer") {
				t.Fatalf("Wait() = %v, want the consumer's failure", err)
			}
			if ctx.Err() == nil {
				t.Fatal("the group's context is still live")
			}
		})
	}
}

func TestStoppingTheContextIsACleanStop(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	g, _ := New(parent)
	g.Go("a", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	g.Go("b", func(ctx context.Context) error { <-ctx.Done(); return errors.New("closed while stopping") })
	time.AfterFunc(10*time.Millisecond, cancel)
	if err := g.Wait(); err != nil {
		t.Fatalf("Wait() = %v after cancel, want nil", err)
	}
}
