package busapi

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"tori.dev/contract/appmetrics"
	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/metrics"
	"tori.dev/services/logs/internal/usecase"
)

// The metrics' queues: the zones' reports, and billing's plan changes for the metrics' own
// plan copy (a queue of its own, so the entries' plan consumer stays as it is).
const (
	QueueMetrics      = "logs.metrics"
	QueueMetricsPlans = "logs.metrics_plans"
)

// MetricsTransactions turns the bus's transaction into the metrics use cases' Tx;
// *store.Store is one.
type MetricsTransactions interface {
	BindMetrics(tx bus.Tx) usecase.MetricsTx
}

// Metrics consumes the zones' metrics reports (zone.app.metrics).
type Metrics struct {
	txs    MetricsTransactions
	ingest *usecase.MetricsIngest
	log    *slog.Logger
}

// NewMetrics builds the zone.app.metrics consumer.
func NewMetrics(txs MetricsTransactions, ingest *usecase.MetricsIngest, log *slog.Logger) *Metrics {
	return &Metrics{txs: txs, ingest: ingest, log: log}
}

// Subscription is the durable consumer of the reports, batched as the log batches are: every
// edge of every zone reports every few seconds.
func (m *Metrics) Subscription() bus.Subscription {
	return bus.Subscription{Queue: QueueMetrics, Keys: []string{zonebus.KeyAppMetrics}, Handle: m.Handle, Batch: true}
}

// Handle stores one report. A report without a usable id or minute breaks the contract as a
// whole (permanent); a malformed app's row is dropped alone, counted in one warning.
func (m *Metrics) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	// Every id is checked here, row by row, so a bad row costs only itself.
	var w zonev1.AppMetrics
	if err := d.DecodeEach(&w); err != nil {
		return bus.Permanent(fmt.Errorf("busapi: decode AppMetrics: %w", err))
	}
	id, err := uuid.Parse(w.GetReportId())
	if err != nil {
		return bus.Permanent(fmt.Errorf("busapi: AppMetrics report id %q: %w", w.GetReportId(), err))
	}
	if w.GetMinute() == nil {
		return bus.Permanent(fmt.Errorf("busapi: AppMetrics %s without a minute", id))
	}
	zone, _ := bus.ZoneOf(d.Publisher)
	r, rejected := reportFromWire(&w)
	r.ID, r.Zone = id.String(), zone
	if rejected > 0 {
		m.log.WarnContext(ctx, "malformed metrics rows dropped", "report_id", r.ID, "zone", zone, "dropped", rejected)
	}
	return m.ingest.Store(ctx, m.txs.BindMetrics(tx), r)
}

// reportFromWire keeps the rows of the contract's shape: a UUID app, as many status classes
// and buckets as contract/appmetrics names, no negative count, a process named as log
// entries name them.
func reportFromWire(w *zonev1.AppMetrics) (metrics.Report, int) {
	r := metrics.Report{Minute: w.GetMinute().AsTime()}
	rejected := 0
	nonNegative := func(vs []int64) bool {
		for _, v := range vs {
			if v < 0 {
				return false
			}
		}
		return true
	}
	for _, q := range w.GetRequests() {
		app, err := uuid.Parse(q.GetAppId())
		if err != nil || len(q.GetByStatusClass()) != len(appmetrics.StatusClasses) ||
			len(q.GetLatencyBuckets()) != len(appmetrics.LatencyBoundsMillis)+1 ||
			!nonNegative(q.GetByStatusClass()) || !nonNegative(q.GetLatencyBuckets()) {
			rejected++
			continue
		}
		r.Requests = append(r.Requests, metrics.Requests{AppID: app.String(), Counts: q.GetByStatusClass(),
			Buckets: q.GetLatencyBuckets(), SumMillis: q.GetLatencySumMillis()})
	}
	for _, u := range w.GetUsage() {
		app, err := uuid.Parse(u.GetAppId())
		if err != nil || !logs.ValidProcess(u.GetProcess()) || u.GetCpuCores() < 0 || u.GetMemoryBytes() < 0 || u.GetMemoryLimitBytes() < 0 {
			rejected++
			continue
		}
		r.Usage = append(r.Usage, metrics.Usage{AppID: app.String(), Instance: u.GetProcess(), CPUCores: u.GetCpuCores(),
			MemBytes: u.GetMemoryBytes(), LimitBytes: u.GetMemoryLimitBytes()})
	}
	return r, rejected
}

// MetricsPlansConsumer consumes billing's plan changes into the metrics' plan copy.
type MetricsPlansConsumer struct {
	txs   MetricsTransactions
	plans *usecase.MetricsPlans
	log   *slog.Logger
}

// NewMetricsPlans builds the metrics' billing.account.plan_changed consumer.
func NewMetricsPlans(txs MetricsTransactions, plans *usecase.MetricsPlans, log *slog.Logger) *MetricsPlansConsumer {
	return &MetricsPlansConsumer{txs: txs, plans: plans, log: log}
}

// Subscription is the durable consumer of plan changes for the metrics.
func (p *MetricsPlansConsumer) Subscription() bus.Subscription {
	return bus.Subscription{Queue: QueueMetricsPlans, Keys: []string{billingbus.KeyPlanChanged}, Handle: p.Handle}
}

// Handle records a plan change unless a newer one is already recorded.
func (p *MetricsPlansConsumer) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var m billingv1.AccountPlanChanged
	if err := d.Decode(&m); err != nil {
		return bus.Permanent(fmt.Errorf("busapi: decode AccountPlanChanged: %w", err))
	}
	plan := metricsPlanOf(m.GetAccountId(), m.GetLimits(), m.GetVersion())
	if m.GetAccountId() == "" || plan.RetentionDays <= 0 {
		// Nothing usable to record; retrying would not make it usable.
		p.log.WarnContext(ctx, "plan change without account or metrics retention ignored",
			"message_id", d.ID, "account_id", m.GetAccountId(), "plan", m.GetPlan())
		return nil
	}
	return p.plans.PlanChanged(ctx, p.txs.BindMetrics(tx), plan)
}

func metricsPlanOf(account string, l *billingv1.PlanLimits, version int64) metrics.Plan {
	return metrics.Plan{AccountID: account, RetentionDays: int(l.GetMetricsRetentionDays()),
		InstanceMemoryBytes: l.GetInstanceMemoryBytes(), Version: version}
}

// MetricsPlan implements usecase.MetricsPlanSource with the one plan client. Its errors wrap
// logs.ErrPlanUnavailable.
func (b BillingPlans) MetricsPlan(ctx context.Context, accountID string) (metrics.Plan, error) {
	reply, err := b.Client.AccountPlan(ctx, accountID)
	if err != nil {
		return metrics.Plan{}, fmt.Errorf("%w: %w", logs.ErrPlanUnavailable, err)
	}
	return metricsPlanOf(accountID, reply.GetLimits(), reply.GetVersion()), nil
}
