package busapi

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/usecase"
)

// Batching of log lines: a batch goes out when it is this full or this old.
const (
	batchMax   = 200
	batchEvery = 250 * time.Millisecond
)

// Logs batches customer output (already redacted) and publishes it through the outbox.
type Logs struct {
	store usecase.Store
	log   *slog.Logger

	mu      sync.Mutex
	pending []*logsv1.LogEntry
	wake    chan struct{}
}

// NewLogs makes a log publisher; Run must be running for lines to leave.
func NewLogs(s usecase.Store, log *slog.Logger) *Logs {
	return &Logs{store: s, log: log, wake: make(chan struct{}, 1)}
}

// Line implements supervisor.LogSink: a line of no instance (a build, a release Job).
func (l *Logs) Line(appID, deployID, stream, message string, redactions int) {
	l.ProcessLine(appID, deployID, "", stream, message, redactions)
}

// ProcessLine implements supervisor.ProcessLogSink: a line of the instance process
// (cron.<job>.<run>).
func (l *Logs) ProcessLine(appID, deployID, process, stream, message string, redactions int) {
	l.mu.Lock()
	l.pending = append(l.pending, &logsv1.LogEntry{
		AppId: appID, DeployId: deployID, Process: process, Stream: stream, Timestamp: timestamppb.Now(), Message: message, Redactions: int32(redactions),
	})
	full := len(l.pending) >= batchMax
	l.mu.Unlock()
	if full {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// Run publishes batches until ctx ends, then flushes what is left. A batch leaves when it is
// full or batchEvery after the last one left, whichever comes first.
func (l *Logs) Run(ctx context.Context) error {
	t := time.NewTimer(batchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.flush(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
		case <-l.wake:
		}
		l.flush(ctx)
		t.Reset(batchEvery)
	}
}

func (l *Logs) flush(ctx context.Context) {
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	l.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), batchMax)
		err := l.store.InTx(ctx, func(tx usecase.Tx) error {
			return tx.Publish(ctx, zonebus.KeyLogBatch, &logsv1.LogBatch{Entries: batch[:n]})
		})
		if err != nil {
			l.log.WarnContext(ctx, "publish log batch; lines dropped", "lines", n, "err", err.Error())
		}
		batch = batch[n:]
	}
}
