package busapi

import (
	"context"
	"fmt"

	"tori.dev/pkg/bus"
	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// Ingest consumes the zones' log batches.
type Ingest struct {
	txs    Transactions
	ingest *usecase.Ingest
}

// NewIngest builds the zone.logs.batch consumer.
func NewIngest(txs Transactions, ingest *usecase.Ingest) *Ingest {
	return &Ingest{txs: txs, ingest: ingest}
}

// Subscription is the durable consumer of log batches.
func (in *Ingest) Subscription(prefetch int) bus.Subscription {
	return bus.Subscription{Queue: QueueIngest, Keys: []string{zonebus.KeyLogBatch}, Handle: in.Handle, Prefetch: prefetch, Batch: true}
}

// Handle stores one batch.
func (in *Ingest) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	// Each entry's ids are checked by entryFromWire, so a bad line costs only itself.
	var batch logsv1.LogBatch
	if err := d.DecodeEach(&batch); err != nil {
		return bus.Permanent(fmt.Errorf("busapi: decode LogBatch: %w", err))
	}
	zone, _ := bus.ZoneOf(d.Publisher)
	b := usecase.Batch{MessageID: d.ID, Zone: zone, Entries: make([]logs.Entry, 0, len(batch.GetEntries()))}
	for _, w := range batch.GetEntries() {
		e, reason := entryFromWire(w)
		if reason != "" {
			if b.Rejected == nil {
				b.Rejected = map[string]int{}
			}
			b.Rejected[reason]++
			continue
		}
		b.Entries = append(b.Entries, e)
	}
	return in.ingest.Store(ctx, in.txs.Bind(tx), b)
}
