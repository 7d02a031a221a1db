package usecase

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// artifactsDeleted counts the artifacts this process removed from the store on /metrics
// (pkg/metrics), by why: the app was deleted (app_deleted), or no deploy refers to it any
// more (unreferenced: an upload whose deploy was never recorded). An artifact a deploy
// refers to stays, so any deploy of the app can be rolled back to.
var artifactsDeleted = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "tori_deploys_artifacts_deleted_total",
	Help: "Artifacts removed from the object store, by reason (app_deleted, unreferenced).",
}, []string{"reason"})
