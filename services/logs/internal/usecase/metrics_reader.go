package usecase

import (
	"context"
	"time"

	"tori.dev/contract/appmetrics"
	"tori.dev/services/logs/internal/metrics"
)

// MetricsReader is the read use case of GET /api/apps/{slug}/metrics.
type MetricsReader struct {
	apps  AppReader
	store MetricsStore
	plans *MetricsPlans
	now   func() time.Time
}

// NewMetricsReader builds the reader; now is the clock, injectable for tests.
func NewMetricsReader(apps AppReader, st MetricsStore, plans *MetricsPlans, now func() time.Time) *MetricsReader {
	return &MetricsReader{apps: apps, store: st, plans: plans, now: now}
}

// Read resolves slug for accountID (404), validates raw (400), applies the plan's metrics
// retention (410) and answers the metric's series, in the log route's order of checks.
func (r *MetricsReader) Read(ctx context.Context, accountID, slug string, raw metrics.RawQuery) (metrics.Result, error) {
	target, err := r.apps.Target(ctx, accountID, slug)
	if err != nil {
		return metrics.Result{}, err
	}
	now := r.now()
	q, err := metrics.ParseQuery(raw, now)
	if err != nil {
		return metrics.Result{}, err
	}
	plan, err := r.plans.Plan(ctx, accountID)
	if err != nil {
		return metrics.Result{}, err
	}
	if q, err = metrics.ApplyRetention(q, now, plan.RetentionDays); err != nil {
		return metrics.Result{}, err
	}
	g := metrics.GridOf(q)
	res := metrics.Result{Metric: q.Metric, Unit: metrics.Units[q.Metric], Step: q.Step, Start: g.First, End: q.End, Series: []metrics.Series{}}
	from := g.First
	switch q.Metric {
	case appmetrics.Requests:
		sums, err := r.store.RequestSums(ctx, target.AppID, from, q.End, q.Step)
		if err != nil {
			return metrics.Result{}, err
		}
		res.Series = metrics.RequestSeries(g, sums)
	case appmetrics.Latency:
		sums, err := r.store.LatencySums(ctx, target.AppID, from, q.End, q.Step)
		if err != nil {
			return metrics.Result{}, err
		}
		res.Series = metrics.LatencySeries(g, sums)
	default:
		rows, err := r.store.InstanceUsage(ctx, target.AppID, from, q.End, q.Step, q.Process)
		if err != nil {
			return metrics.Result{}, err
		}
		res.Series = metrics.UsageSeries(q.Metric, g, rows)
		if q.Metric == appmetrics.Memory {
			res.Limit = metrics.MemoryLimit(plan, rows)
		}
	}
	return res, nil
}
