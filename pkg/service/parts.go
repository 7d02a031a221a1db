package service

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/lifecycle"
)

// part is one long-lived piece Run starts: a job is a periodic one.
type part struct {
	name string
	run  func(ctx context.Context) error
	job  *lifecycle.Job
}

// Go adds a part that runs until the process stops; one that stops early stops the process.
func (p *Process) Go(name string, run func(ctx context.Context) error) {
	p.parts = append(p.parts, part{name: name, run: run})
}

// Every adds a periodic job (pkg/lifecycle): a failed round is logged and tried again.
func (p *Process) Every(job lifecycle.Job) {
	p.parts = append(p.parts, part{name: job.Name, job: &job})
}

// Consume adds a consumer for each subscription. /readyz waits for each queue from now on,
// so call it before Run serves HTTP: the process is never ready with a consumer unbound.
func (p *Process) Consume(subs ...bus.Subscription) {
	for _, sub := range subs {
		sub.Ready = p.Health.Await(sub.Queue)
		p.Go(sub.Queue+" consumer", func(ctx context.Context) error { return p.Bus.Consume(ctx, p.Pool, sub) })
	}
}

// Respond adds a responder answering requests on queue.
func (p *Process) Respond(name, queue string, handle bus.Responder) {
	p.Go(name, func(ctx context.Context) error { return p.Bus.Serve(ctx, queue, handle) })
}

// RelayOutbox adds the outbox relay, and the hourly housekeeping that prunes sent outbox rows
// and processed-message ids past the bus's default retention.
func (p *Process) RelayOutbox() { p.RelayOutboxKeeping(0, bus.DefaultRetention) }

// RelayOutboxKeeping is RelayOutbox with housekeeping every `every` (the default when zero)
// keeping rows for keep: a very busy consumer may keep processed ids for less than a week,
// as long as that still outlives any redelivery.
func (p *Process) RelayOutboxKeeping(every time.Duration, keep bus.Retention) {
	p.Go("outbox relay", bus.NewRelay(p.Bus, p.Pool, p.Log).Run)
	p.Go("bus housekeeping", func(ctx context.Context) error {
		return bus.HousekeepKeeping(ctx, p.Pool, every, keep, p.Log)
	})
}

// ServeHTTP listens on addr now (so a taken port fails the start, and Run logs the bound
// address) and serves app once Run starts. When the process stops, requests in flight get
// shutdownTimeout to finish. wrap, when given, wraps the listener (a per-address cap).
func (p *Process) ServeHTTP(app *fiber.App, addr string, shutdownTimeout time.Duration, wrap ...func(net.Listener) net.Listener) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	// Closing it again after a served shutdown is harmless; before, it frees the port.
	p.OnClose(func() { _ = ln.Close() })
	p.addrs = append(p.addrs, "addr", ln.Addr().String())
	for _, w := range wrap {
		ln = w(ln)
	}
	p.Go("http server", func(context.Context) error { return app.Listener(ln) })
	p.Go("http shutdown", func(ctx context.Context) error {
		<-ctx.Done()
		if err := app.ShutdownWithTimeout(shutdownTimeout); err != nil {
			p.Log.WarnContext(context.WithoutCancel(ctx), "http shutdown", "err", err.Error())
		}
		// A stop before the server took the listener would otherwise leave it accepting.
		_ = ln.Close()
		return nil
	})
	return nil
}

// Listening adds key-value pairs to the "listening" line (a server Run does not start).
func (p *Process) Listening(kv ...any) { p.addrs = append(p.addrs, kv...) }

// run runs every part added until ctx ends or one of them fails or stops.
func (p *Process) run(ctx context.Context) error {
	g, _ := lifecycle.New(ctx)
	for _, pt := range p.parts {
		if pt.job != nil {
			g.Every(p.Log, *pt.job)
			continue
		}
		g.Go(pt.name, pt.run)
	}
	p.Log.InfoContext(ctx, "listening", p.addrs...)
	err := g.Wait()
	p.Log.InfoContext(context.WithoutCancel(ctx), "stopped", "err", err)
	return err
}
