// Package edgecount counts the requests the edge answers for each app (API "Metrics"): status
// class, latency histogram and latency sum per minute, in memory, and hands the counts since
// the last collection to the flusher (flush.go), which writes them to the zone's outbox as
// zonev1.AppMetrics.
//
// The request path must stay cheap (bench-edge shows the cost): one lock-free map read to
// find the app's counters and three atomic additions. The map is copied on write, under a
// lock taken only when an app is counted for the first time since the edge started.
package edgecount

import (
	"sync"
	"sync/atomic"
	"time"

	"tori.dev/contract/appmetrics"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/cowmap"
)

// buckets is the number of latency buckets a report carries: one per bound and one over.
var buckets = len(appmetrics.LatencyBoundsMillis) + 1

// classes is the number of status classes (1xx..5xx).
var classes = len(appmetrics.StatusClasses)

// slot is one minute's counters of one app. Every counter only grows: a collection reads
// them and reports the difference from its previous reading, so nothing is ever reset under
// a request's feet.
type slot struct {
	classes   [5]atomic.Int64
	buckets   [32]atomic.Int64 // the first len(LatencyBoundsMillis)+1 are used
	sumMicros atomic.Int64
}

// reading is what a collection last read of a slot.
type reading struct {
	classes   [5]int64
	buckets   [32]int64
	sumMicros int64
}

// appCounts are one app's counters: two slots, by the parity of the minute a request ended
// in. A collection at minute N reads slot N%2 as minute N and slot (N-1)%2 as minute N-1;
// as long as collections come at least once a minute (the flusher's interval is at most a
// minute and it collects at every turn), a slot never holds requests of two minutes that
// were not already reported.
type appCounts struct {
	slots [2]slot
	read  [2]reading // the collector's own; under Counter.collect
	// active is the unix minute of the last collection that found requests (the collector's).
	active int64
}

// idleMinutes is how long an app goes without a request before its counters are dropped:
// an app deleted or moved away would otherwise keep them until the edge restarts.
const idleMinutes = 10

// Counter counts requests per app. Its zero value is ready; it is safe for concurrent use.
type Counter struct {
	// apps are the counters by app: a request reads them without locking, and an app's
	// first request copies one shard, not the map (10,000 apps' counters used to be copied
	// whole for each app that came back from idle).
	apps    cowmap.Map[*appCounts]
	mu      sync.Mutex // serializes changes of the map
	collect sync.Mutex // serializes collections
	// retired are the counters of apps dropped by the previous collection, read once more by
	// the next: a request that found them just before they went is still reported.
	retired map[string]*appCounts
}

func init() {
	if len(appmetrics.StatusClasses) > 5 || buckets > 32 {
		panic("edgecount: the contract's classes or buckets outgrew the counters")
	}
}

// Observe counts one request of appID answered with status after elapsed, ended at end.
// A status outside 100–599 counts in no class but still in the latency histogram.
func (c *Counter) Observe(appID string, status int, elapsed time.Duration, end time.Time) {
	a := c.app(appID)
	s := &a.slots[minuteOf(end)&1]
	if i := appmetrics.StatusClass(status); i >= 0 {
		s.classes[i].Add(1)
	}
	micros := elapsed.Microseconds()
	s.buckets[appmetrics.Bucket(float64(micros)/1000)].Add(1)
	s.sumMicros.Add(micros)
}

// app finds (or adds) the app's counters.
func (c *Counter) app(appID string) *appCounts {
	if a, ok := c.apps.Get(appID); ok {
		return a
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.apps.Get(appID); ok {
		return a
	}
	a := &appCounts{}
	c.apps.Put(appID, a)
	return a
}

// minuteOf is the unix minute t lies in.
func minuteOf(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - 59) / 60
	}
	return s / 60
}

// Minute is one minute's counts since the previous collection, of the apps that had any.
type Minute struct {
	Minute time.Time // second 0 of the minute, UTC
	Apps   []*zonev1.AppRequestCounts
}

// Collect returns the counts since the previous collection, at most two minutes' (the one
// before now's first), leaving out a minute without a request.
func (c *Counter) Collect(now time.Time) []Minute {
	c.collect.Lock()
	defer c.collect.Unlock()
	n := minuteOf(now)
	out := []Minute{{Minute: time.Unix((n-1)*60, 0).UTC()}, {Minute: time.Unix(n*60, 0).UTC()}}
	read := func(appID string, a *appCounts) bool {
		found := false
		for i, minute := range []int64{n - 1, n} {
			if d := a.delta(int(minute & 1)); d != nil {
				d.AppId = appID
				out[i].Apps = append(out[i].Apps, d)
				found = true
			}
		}
		return found
	}
	for appID, a := range c.retired {
		read(appID, a)
	}
	c.retired = nil
	var idle []string
	c.apps.Range(func(appID string, a *appCounts) {
		if read(appID, a) || a.active == 0 {
			a.active = n
		} else if n-a.active >= idleMinutes {
			idle = append(idle, appID)
		}
	})
	c.drop(idle)
	var kept []Minute
	for _, mm := range out {
		if len(mm.Apps) > 0 {
			kept = append(kept, mm)
		}
	}
	return kept
}

// drop removes idle apps from the map and keeps their counters for the next collection's
// last reading; called under collect.
func (c *Counter) drop(idle []string) {
	if len(idle) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retired = make(map[string]*appCounts, len(idle))
	for _, appID := range idle {
		c.retired[appID], _ = c.apps.Get(appID)
		c.apps.Delete(appID)
	}
}

// delta reads slot i and returns what it gained since its previous reading, or nil.
func (a *appCounts) delta(i int) *zonev1.AppRequestCounts {
	s, prev := &a.slots[i], &a.read[i]
	var cur reading
	// Each counter is read once: a request counted while they are read shows partly now and
	// the rest at the next collection, so the sums over collections stay exact.
	cur.sumMicros = s.sumMicros.Load()
	any := false
	for j := 0; j < classes; j++ {
		cur.classes[j] = s.classes[j].Load()
		any = any || cur.classes[j] != prev.classes[j]
	}
	for j := 0; j < buckets; j++ {
		cur.buckets[j] = s.buckets[j].Load()
		any = any || cur.buckets[j] != prev.buckets[j]
	}
	if !any && cur.sumMicros == prev.sumMicros {
		return nil
	}
	d := &zonev1.AppRequestCounts{ByStatusClass: make([]int64, classes), LatencyBuckets: make([]int64, buckets),
		LatencySumMillis: float64(cur.sumMicros-prev.sumMicros) / 1000}
	for j := 0; j < classes; j++ {
		d.ByStatusClass[j] = cur.classes[j] - prev.classes[j]
	}
	for j := 0; j < buckets; j++ {
		d.LatencyBuckets[j] = cur.buckets[j] - prev.buckets[j]
	}
	*prev = cur
	return d
}
