package usecase

import (
	"context"
	"log/slog"
	"time"

	"tori.dev/services/logs/internal/metrics"
)

// MetricsIngest stores the zones' metrics reports by the entries' rule (Ingest): an app
// deleted here, or hosted by another zone than the report's publisher, is dropped; an app
// not heard of yet is kept, since a zone may report before apps.app.created arrives and
// reads reach rows only through a known app.
type MetricsIngest struct {
	store MetricsStore
	log   *slog.Logger
	now   func() time.Time
	// maxDays is the longest metrics retention in force: an older report would be dropped
	// with its partition anyway.
	maxDays func() int
}

// NewMetricsIngest builds the metrics ingest.
func NewMetricsIngest(st MetricsStore, log *slog.Logger, now func() time.Time, maxDays func() int) *MetricsIngest {
	return &MetricsIngest{store: st, log: log, now: now, maxDays: maxDays}
}

// Store keeps one report in tx, each of its apps' rows once however often it is delivered.
func (in *MetricsIngest) Store(ctx context.Context, tx MetricsTx, r metrics.Report) error {
	r.Minute = r.Minute.UTC().Truncate(time.Minute)
	now := in.now()
	switch {
	case r.Empty():
		return nil
	case r.Minute.Before(metrics.RetentionEdge(now, in.maxDays())):
		in.log.WarnContext(ctx, "metrics report older than any retention dropped", "report_id", r.ID, "minute", r.Minute)
		return nil
	case r.Minute.After(now.Add(maxAhead)):
		in.log.WarnContext(ctx, "metrics report too far ahead dropped", "report_id", r.ID, "minute", r.Minute)
		return nil
	}
	if err := in.store.EnsureMetricPartitions(ctx, []time.Time{r.Minute}); err != nil {
		return err
	}
	// Shared with entries' ingests: an app's deletion waits for this report, and a report
	// after it sees the app deleted.
	if err := tx.LockIngestShared(ctx); err != nil {
		return err
	}
	known, err := tx.KnownAmong(ctx, r.AppIDs())
	if err != nil {
		return err
	}
	foreign := 0
	r = r.Keep(func(appID string) bool {
		k := known[appID]
		if k.Zone != "" && k.Zone != r.Zone {
			foreign++
			return false
		}
		return !k.Deleted
	})
	if foreign > 0 {
		in.log.WarnContext(ctx, "metrics for apps another zone hosts dropped", "report_id", r.ID, "zone", r.Zone, "dropped", foreign)
	}
	if r.Empty() {
		return nil
	}
	_, err = tx.SaveReport(ctx, r)
	return err
}
