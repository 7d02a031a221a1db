package managed

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// dumpsReclaimed counts the dump objects the zone deleted from its bucket on /metrics
// (pkg/metrics), by why: pruned (retention keeps seven) or database_deleted (the database,
// or its app, went).
var dumpsReclaimed = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "tori_zone_dump_objects_reclaimed_total",
	Help: "Dump objects the zone deleted from its bucket, by reason (pruned, database_deleted).",
}, []string{"reason"})

// StartDumpMetrics makes both series exist from the start, so a rate over them is never "no
// data". Called by the process that deletes dumps (the database host) alone: a process that
// only shows that host's figures (the agent) must not count the family itself.
func StartDumpMetrics() {
	dumpsReclaimed.WithLabelValues("pruned")
	dumpsReclaimed.WithLabelValues("database_deleted")
}
