package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Job is periodic work a service does in the background: sweeps, pruning, retention, dumps,
// health checks. Every job runs the same way: one span per run, so each run's log lines carry
// a trace id of their own; a failed run is logged and tried again on the next tick (a job
// that must stop the service on failure is a part, not a job); and it stops with its group.
type Job struct {
	// Name says what the job does ("close overdue deploys"); it names the span and the log lines.
	Name string
	// Every is the time between the end of one run and the start of the next.
	Every time.Duration
	// Immediately runs the job once at start, before the first wait.
	Immediately bool
	// Run does one round. It returns how many things it did (logged at info when non-zero,
	// so idle rounds stay quiet) or an error (logged at warn).
	Run func(ctx context.Context) (int64, error)
}

var tracer = otel.Tracer("tori.dev/pkg/lifecycle")

// Every runs job under the group until the group's context ends.
func (g *Group) Every(log *slog.Logger, job Job) {
	g.Go(job.Name, func(ctx context.Context) error { return RunJob(ctx, log, job) })
}

// RunJob runs job until ctx ends, then returns nil. It is Group.Every for code that runs a
// job outside a group (a test, a command that does one thing).
func RunJob(ctx context.Context, log *slog.Logger, job Job) error {
	if job.Every <= 0 {
		return errors.New("lifecycle: job " + job.Name + " has no interval")
	}
	if log == nil {
		log = slog.Default()
	}
	log.InfoContext(ctx, "periodic job started", "job", job.Name, "every", job.Every.String())
	if job.Immediately {
		runOnce(ctx, log, job)
	}
	t := time.NewTimer(job.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			log.InfoContext(context.WithoutCancel(ctx), "periodic job stopped", "job", job.Name)
			return nil
		case <-t.C:
			runOnce(ctx, log, job)
			t.Reset(job.Every)
		}
	}
}

func runOnce(ctx context.Context, log *slog.Logger, job Job) {
	ctx, span := tracer.Start(ctx, job.Name, trace.WithSpanKind(trace.SpanKindInternal))
	defer span.End()
	n, err := job.Run(ctx)
	span.SetAttributes(attribute.Int64("tori.job.count", n))
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping mid-run is not a failure.
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		log.WarnContext(ctx, "periodic job failed", "job", job.Name, "err", err.Error())
	case n > 0:
		log.InfoContext(ctx, "periodic job done", "job", job.Name, "count", n)
	}
}
