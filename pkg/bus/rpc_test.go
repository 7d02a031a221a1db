package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	busv1 "tori.dev/proto/gen/tori/bus/v1"
)

func echo(ctx context.Context, d bus.Delivery) (proto.Message, error) {
	var req busv1.TestRequest
	if err := d.Decode(&req); err != nil {
		return nil, err
	}
	switch req.Question {
	case "reject":
		return nil, bus.Reject("not_found", "no such thing")
	case "fail":
		return nil, errors.New("the database password is hunter2")
	case "panic":
		panic("responder bug")
	case "slow":
		// Ignores ctx, as a responder stuck in a call without one would.
		time.Sleep(1500 * time.Millisecond)
		return &busv1.TestReply{Answer: "too late"}, nil
	}
	return &busv1.TestReply{Answer: "echo: " + req.Question}, nil
}

func TestRequestReply(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	server := dial(t, cfg)
	clientCfg, proxy := viaProxy(t, cfg)
	client := dial(t, clientCfg)
	run(t, "serve", func(ctx context.Context) error { return server.Serve(ctx, "test.rpc.echo", echo) })
	waitQueue(t, cfg.Namespace+"test.rpc.echo")
	ctx := context.Background()

	ask := func(c *bus.Conn, ctx context.Context, q string) (string, error) {
		var reply busv1.TestReply
		err := c.Request(ctx, "test.rpc.echo", &busv1.TestRequest{Question: q}, &reply)
		return reply.Answer, err
	}

	t.Run("answer", func(t *testing.T) {
		got, err := ask(client, ctx, "hello")
		if err != nil || got != "echo: hello" {
			t.Fatalf("got %q, %v", got, err)
		}
	})

	t.Run("reject", func(t *testing.T) {
		_, err := ask(client, ctx, "reject")
		var re *bus.RemoteError
		if !errors.As(err, &re) || re.Code != "not_found" || re.Message != "no such thing" {
			t.Fatalf("want RemoteError not_found, got %v", err)
		}
	})

	t.Run("internal error hides its cause", func(t *testing.T) {
		for _, q := range []string{"fail", "panic"} {
			_, err := ask(client, ctx, q)
			var re *bus.RemoteError
			if !errors.As(err, &re) || re.Code != "internal" || strings.Contains(re.Message, "hunter2") {
				t.Fatalf("%s: want RemoteError internal without the cause, got %v", q, err)
			}
		}
	})

	t.Run("context deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := ask(client, ctx, "slow")
		if !errors.Is(err, bus.ErrTimeout) {
			t.Fatalf("want ErrTimeout, got %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("gave up after %s", d)
		}
	})

	t.Run("RequestTimeout", func(t *testing.T) {
		short := cfg
		short.RequestTimeout = 300 * time.Millisecond
		c := dial(t, short)
		start := time.Now()
		_, err := ask(c, ctx, "slow")
		if !errors.Is(err, bus.ErrTimeout) {
			t.Fatalf("want ErrTimeout, got %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("gave up after %s", d)
		}
	})

	t.Run("no responder", func(t *testing.T) {
		var reply busv1.TestReply
		err := client.Request(ctx, "test.rpc.nobody", &busv1.TestRequest{Question: "anyone?"}, &reply)
		if !errors.Is(err, bus.ErrNoResponder) {
			t.Fatalf("want ErrNoResponder, got %v", err)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for i := range 200 {
			wg.Go(func() {
				q := fmt.Sprintf("q%d", i)
				got, err := ask(client, ctx, q)
				if err == nil && got != "echo: "+q {
					err = fmt.Errorf("asked %s, got %q", q, got)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("after a cut", func(t *testing.T) {
		proxy.Cut()
		// The next request waits for the redial; it may also be the one that finds the
		// connection dead, which is not a timeout.
		eventually(t, 10*time.Second, "an answer after the cut", func() bool {
			got, err := ask(client, ctx, "again")
			return err == nil && got == "echo: again"
		})
	})
}
