package main

import (
	"tori.dev/pkg/service"
	"tori.dev/services/zoneagent/internal/busapi"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/instancemetrics"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/supervisor"
)

// sampleInstances samples every running instance's cgroup each ZONE_METRICS_SAMPLE_INTERVAL
// and publishes the customer's CPU and memory metrics through the outbox (README "Metrics").
func sampleInstances(p *service.Process, cfg config.Config, st *store.Store, runner *supervisor.Local) {
	s := &instancemetrics.Sampler{Zone: cfg.Zone, Interval: cfg.MetricsSampleInterval, Publish: busapi.PublishAppMetrics(st), Log: p.Log,
		Instances: func() []instancemetrics.Instance {
			running := runner.Running()
			out := make([]instancemetrics.Instance, 0, len(running))
			for _, r := range running {
				out = append(out, instancemetrics.Instance{AppID: r.AppID, Process: r.Process, Key: r.Sandbox,
					Started: r.Sandbox.Started(), Read: r.Sandbox.Usage})
			}
			return out
		}}
	p.Go("instance metrics", s.Run)
}
