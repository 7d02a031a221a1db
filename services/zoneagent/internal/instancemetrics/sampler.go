// Package instancemetrics samples each running instance's cgroup for the customer's CPU and
// memory metrics (API "Metrics") and publishes the samples as zonev1.AppMetrics `usage`
// through the zone's outbox.
package instancemetrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// DefaultInterval is ZONE_METRICS_SAMPLE_INTERVAL's default.
const DefaultInterval = time.Minute

// Instance is one running instance to sample.
type Instance struct {
	AppID   string
	Process string // as log entries name it: web.1, worker.2, preview.<id>
	// Key tells one run of an instance from another (its sandbox): a restarted web.1 is a
	// new process whose CPU time starts again from zero.
	Key     any
	Started time.Time
	Read    func() (sandbox.Usage, error)
}

// reading is an instance's previous sample.
type reading struct {
	cpuMicros int64
	at        time.Time
}

// Sampler samples every instance each Interval.
type Sampler struct {
	Zone      string
	Interval  time.Duration // 0: DefaultInterval
	Instances func() []Instance
	// Publish writes one report to the zone's outbox (busapi.PublishAppMetrics).
	Publish func(ctx context.Context, m *zonev1.AppMetrics) error
	Log     *slog.Logger
	Now     func() time.Time // tests; nil: time.Now

	prev map[any]reading
}

// Run samples until ctx ends.
func (s *Sampler) Run(ctx context.Context) error {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := s.Sample(ctx); err != nil {
			s.log().WarnContext(ctx, "instance usage not written; the next sample follows", "err", err.Error())
		}
	}
}

// Sample reads every running instance and publishes one report (none when nothing runs):
// CPU as the cores used on average since the previous sample (since the instance started,
// at its first), memory in use now and the instance's limit. An instance that cannot be read
// (it ended meanwhile, or the host counts no CPU time) is left out, never reported as zero.
func (s *Sampler) Sample(ctx context.Context) error {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	next := map[any]reading{}
	var usage []*zonev1.InstanceUsage
	for _, in := range s.Instances() {
		u, err := in.Read()
		if err != nil {
			s.log().DebugContext(ctx, "instance usage unread", "app_id", in.AppID, "process", in.Process, "err", err.Error())
			continue
		}
		next[in.Key] = reading{cpuMicros: u.CPUMicros, at: now}
		from, since := int64(0), in.Started
		if p, ok := s.prev[in.Key]; ok {
			from, since = p.cpuMicros, p.at
		}
		window := now.Sub(since)
		if since.IsZero() || window <= 0 {
			continue // no window to average over yet: reported from the next sample
		}
		cores := max(float64(u.CPUMicros-from), 0) / (window.Seconds() * 1e6)
		usage = append(usage, &zonev1.InstanceUsage{AppId: in.AppID, Process: in.Process, CpuCores: cores,
			MemoryBytes: u.MemoryBytes, MemoryLimitBytes: u.MemoryLimitBytes})
	}
	s.prev = next // instances gone since are forgotten
	if len(usage) == 0 {
		return nil
	}
	return s.Publish(ctx, &zonev1.AppMetrics{ReportId: uuid.NewString(), Zone: s.Zone,
		Minute: timestamppb.New(now.Truncate(time.Minute).UTC()), Usage: usage})
}

func (s *Sampler) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}
