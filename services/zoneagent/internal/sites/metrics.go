package sites

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// What /metrics shows of the zone's sites (pkg/metrics serves the default registry).
var (
	objectsReclaimed = promauto.NewCounter(prometheus.CounterOpts{
		Name: "tori_zone_site_objects_reclaimed_total",
		Help: "Site objects deleted from the zone's bucket: revisions retired, discarded or failed, and deleted apps.",
	})
	cacheOpens = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "tori_edge_site_cache_opens_total",
		Help: "Static files and manifests the edge opened, by how: hit (a local copy), kept (a copy an earlier run left, checked and served), miss (fetched from the store into the cache), ranged (too large to cache: read from the store by ranges).",
	}, []string{"result"})
)
