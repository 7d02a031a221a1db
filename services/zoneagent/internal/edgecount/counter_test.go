package edgecount

import (
	"sync"
	"testing"
	"time"

	"tori.dev/contract/appmetrics"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
)

// totals adds up every report's counts of app, by minute.
type totals struct {
	classes [5]int64
	buckets []int64
	sum     float64
}

func addUp(into map[time.Time]*totals, ms []Minute, app string) {
	for _, m := range ms {
		for _, a := range m.Apps {
			if a.AppId != app {
				continue
			}
			t := into[m.Minute]
			if t == nil {
				t = &totals{buckets: make([]int64, len(appmetrics.LatencyBoundsMillis)+1)}
				into[m.Minute] = t
			}
			addCounts(t, a)
		}
	}
}

func addCounts(t *totals, a *zonev1.AppRequestCounts) {
	for i, n := range a.ByStatusClass {
		t.classes[i] += n
	}
	for i, n := range a.LatencyBuckets {
		t.buckets[i] += n
	}
	t.sum += a.LatencySumMillis
}

// Many goroutines counting at once lose nothing: the counts sum exactly, by class and by
// bucket, while collections run meanwhile.
func TestConcurrentCountsSumExactly(t *testing.T) {
	var c Counter
	minute := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	const workers, each = 8, 5000
	statuses := []int{101, 204, 301, 404, 503}
	var wg sync.WaitGroup
	got := map[time.Time]*totals{}
	stop := make(chan struct{})
	collected := make(chan struct{})
	go func() { // collections while counting: deltas must still add up
		defer close(collected)
		for {
			select {
			case <-stop:
				return
			default:
				addUp(got, c.Collect(minute.Add(30*time.Second)), "app-a")
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				c.Observe("app-a", statuses[i%len(statuses)], 3*time.Millisecond, minute.Add(10*time.Second))
				c.Observe("app-b", 200, time.Millisecond, minute.Add(10*time.Second))
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-collected
	addUp(got, c.Collect(minute.Add(40*time.Second)), "app-a")
	tt := got[minute]
	if tt == nil || len(got) != 1 {
		t.Fatalf("minutes reported %v, want only %v", got, minute)
	}
	want := int64(workers * each / len(statuses))
	for i, n := range tt.classes {
		if n != want {
			t.Errorf("class %s: %d, want %d", appmetrics.StatusClasses[i], n, want)
		}
	}
	// 3 ms falls in the bucket bounded by 5 ms.
	b := appmetrics.Bucket(3)
	for i, n := range tt.buckets {
		if w := map[bool]int64{true: workers * each, false: 0}[i == b]; n != w {
			t.Errorf("bucket %d: %d, want %d", i, n, w)
		}
	}
	if tt.sum != float64(workers*each*3) {
		t.Errorf("latency sum %v ms, want %d", tt.sum, workers*each*3)
	}
}

// The deltas of successive collections add up to the total counted, and a collection with
// nothing new reports nothing.
func TestDeltasAddUpToTheTotal(t *testing.T) {
	var c Counter
	minute := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	got := map[time.Time]*totals{}
	total := 0
	for round := 1; round <= 5; round++ {
		for i := 0; i < round*7; i++ {
			c.Observe("app", 200, 120*time.Millisecond, minute.Add(time.Duration(round)*time.Second))
			total++
		}
		ms := c.Collect(minute.Add(time.Duration(round)*time.Second + 500*time.Millisecond))
		if len(ms) != 1 || len(ms[0].Apps) != 1 || ms[0].Apps[0].ByStatusClass[1] != int64(round*7) {
			t.Fatalf("round %d: collected %v, want %d new 2xx", round, ms, round*7)
		}
		addUp(got, ms, "app")
	}
	if ms := c.Collect(minute.Add(20 * time.Second)); len(ms) != 0 {
		t.Fatalf("nothing new, yet collected %v", ms)
	}
	if n := got[minute].classes[1]; n != int64(total) {
		t.Fatalf("2xx over the collections %d, want %d", n, total)
	}
	if s := got[minute].sum; s != float64(total*120) {
		t.Fatalf("latency sum %v, want %d", s, total*120)
	}
}

// Requests counted on either side of a minute's turn are reported in their own minute: the
// collection just after the turn reports the end of the previous minute and the start of
// the new one separately, and later collections carry on with the new minute.
func TestMinuteTurnover(t *testing.T) {
	var c Counter
	m0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	m1, m2 := m0.Add(time.Minute), m0.Add(2*time.Minute)
	c.Observe("app", 200, time.Millisecond, m0.Add(5*time.Second))
	if ms := c.Collect(m0.Add(10 * time.Second)); len(ms) != 1 || !ms[0].Minute.Equal(m0) {
		t.Fatalf("first collection %v", ms)
	}
	// After that collection: 3 more in m0, then the turn, then 2 in m1.
	for i := 0; i < 3; i++ {
		c.Observe("app", 500, time.Millisecond, m0.Add(59*time.Second))
	}
	c.Observe("app", 404, time.Millisecond, m1.Add(10*time.Millisecond))
	c.Observe("app", 404, time.Millisecond, m1.Add(15*time.Millisecond))
	ms := c.Collect(m1.Add(20 * time.Millisecond))
	if len(ms) != 2 || !ms[0].Minute.Equal(m0) || !ms[1].Minute.Equal(m1) {
		t.Fatalf("turn collection %v, want %v then %v", ms, m0, m1)
	}
	if n := ms[0].Apps[0].ByStatusClass[4]; n != 3 || ms[0].Apps[0].ByStatusClass[3] != 0 {
		t.Fatalf("minute %v: %v, want three 5xx only", m0, ms[0].Apps[0].ByStatusClass)
	}
	if n := ms[1].Apps[0].ByStatusClass[3]; n != 2 || ms[1].Apps[0].ByStatusClass[4] != 0 {
		t.Fatalf("minute %v: %v, want two 4xx only", m1, ms[1].Apps[0].ByStatusClass)
	}
	// The next minute reuses m0's slot: only what is new in it is reported, as m2.
	c.Observe("app", 200, time.Millisecond, m2.Add(time.Second))
	ms = c.Collect(m2.Add(2 * time.Second))
	if len(ms) != 1 || !ms[0].Minute.Equal(m2) || ms[0].Apps[0].ByStatusClass[1] != 1 {
		t.Fatalf("collection in %v: %v", m2, ms)
	}
	if ms[0].Apps[0].ByStatusClass[4] != 0 {
		t.Fatalf("m0's 5xx reported again in %v", m2)
	}
}

// Counting one request costs no allocation: the request path stays cheap.
func TestObserveDoesNotAllocate(t *testing.T) {
	var c Counter
	now := time.Now()
	c.Observe("app", 200, time.Millisecond, now)
	if n := testing.AllocsPerRun(1000, func() { c.Observe("app", 200, time.Millisecond, now) }); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}

func BenchmarkObserveParallel(b *testing.B) {
	var c Counter
	apps := []string{"a", "b", "c", "d"}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Observe(apps[i%len(apps)], 200, 2*time.Millisecond, time.Now())
			i++
		}
	})
}
