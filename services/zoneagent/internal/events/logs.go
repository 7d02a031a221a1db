package events

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/store"
)

// Routing keys of what the zone publishes besides deploy progress.
const (
	KeyLogs       = "zone.logs.batch"
	KeyAppNapping = "zone.app.napping"
	KeyAppWoken   = "zone.app.woken"
)

// Batching of log lines: a batch goes out when it is this full or this old.
const (
	batchMax   = 200
	batchEvery = 250 * time.Millisecond
)

// Logs batches customer output (already redacted) and publishes it through the outbox.
type Logs struct {
	Store *store.Store
	Log   *slog.Logger

	mu      sync.Mutex
	pending []*logsv1.LogEntry
	wake    chan struct{}
}

// NewLogs makes a log publisher; Run must be running for lines to leave.
func NewLogs(s *store.Store, log *slog.Logger) *Logs {
	return &Logs{Store: s, Log: log, wake: make(chan struct{}, 1)}
}

// Line implements runner.LogSink.
func (l *Logs) Line(appID, deployID, stream, message string, redactions int) {
	l.mu.Lock()
	l.pending = append(l.pending, &logsv1.LogEntry{
		AppId: appID, DeployId: deployID, Stream: stream, Timestamp: timestamppb.Now(), Message: message, Redactions: int32(redactions),
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

// Run publishes batches until ctx ends, then flushes what is left.
func (l *Logs) Run(ctx context.Context) {
	t := time.NewTicker(batchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.flush(context.WithoutCancel(ctx))
			return
		case <-t.C:
		case <-l.wake:
		}
		l.flush(ctx)
	}
}

func (l *Logs) flush(ctx context.Context) {
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	l.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), batchMax)
		err := l.Store.InTx(ctx, func(tx store.Tx) error {
			return tx.Publish(ctx, KeyLogs, &logsv1.LogBatch{Entries: batch[:n]})
		})
		if err != nil {
			l.Log.WarnContext(ctx, "publish log batch; lines dropped", "lines", n, "err", err.Error())
		}
		batch = batch[n:]
	}
}

// Napped publishes that an app napped or woke, for the app's status.
func Napped(s *store.Store, zone string, log *slog.Logger) func(appID string, napping bool) {
	return func(appID string, napping bool) {
		key := KeyAppWoken
		if napping {
			key = KeyAppNapping
		}
		ctx := context.Background()
		err := s.InTx(ctx, func(tx store.Tx) error {
			return tx.Publish(ctx, key, &zonev1.AppScaleChanged{AppId: appID, Zone: zone, Napping: napping, At: timestamppb.Now()})
		})
		if err != nil {
			log.Warn("publish scale change", "app", appID, "err", err.Error())
		}
	}
}
