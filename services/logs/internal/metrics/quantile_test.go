package metrics

import (
	"math"
	"testing"

	"tori.dev/contract/appmetrics"
)

// hist is a histogram with counts at the given bucket indexes.
func hist(counts map[int]int64) []int64 {
	h := make([]int64, len(appmetrics.LatencyBoundsMillis)+1)
	for i, c := range counts {
		h[i] = c
	}
	return h
}

func TestQuantile(t *testing.T) {
	last := len(appmetrics.LatencyBoundsMillis) // the overflow bucket
	cases := []struct {
		name string
		h    []int64
		q    float64
		want float64
	}{
		// One bucket, (10, 20] ms: the estimate is exactly the linear interpolation.
		{"single bucket p50", hist(map[int]int64{4: 100}), 0.5, 15},
		{"single bucket p95", hist(map[int]int64{4: 100}), 0.95, 19.5},
		{"single bucket p99", hist(map[int]int64{4: 100}), 0.99, 19.9},
		{"single bucket p100", hist(map[int]int64{4: 100}), 1, 20},
		// The first bucket's lower bound is 0.
		{"first bucket", hist(map[int]int64{0: 10}), 0.5, 0.5},
		// 90 in (1, 2], 10 in (50, 75]: p50 inside the first, p95 and p99 inside the second.
		{"two buckets p50", hist(map[int]int64{1: 90, 7: 10}), 0.5, 1 + 50.0/90},
		{"two buckets p95", hist(map[int]int64{1: 90, 7: 10}), 0.95, 50 + 25*0.5},
		{"two buckets p99", hist(map[int]int64{1: 90, 7: 10}), 0.99, 50 + 25*0.9},
		// Empty buckets between are skipped, not interpolated across.
		{"rank at a bucket's top", hist(map[int]int64{2: 50, 9: 50}), 0.5, 5},
		// The overflow bucket reports its lower bound, the last bound.
		{"overflow", hist(map[int]int64{last: 7}), 0.99, appmetrics.LatencyBoundsMillis[last-1]},
		{"overflow p50 of a mix", hist(map[int]int64{3: 1, last: 9}), 0.5, appmetrics.LatencyBoundsMillis[last-1]},
	}
	for _, c := range cases {
		got, ok := Quantile(c.h, c.q)
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v (%v), want %v", c.name, got, ok, c.want)
		}
	}
	if _, ok := Quantile(hist(nil), 0.5); ok {
		t.Error("an empty histogram has a quantile")
	}
}

// Whatever the histogram, p50 <= p95 <= p99 and every estimate lies within the bounds of the
// buckets that hold requests.
func TestQuantileIsMonotone(t *testing.T) {
	width := len(appmetrics.LatencyBoundsMillis) + 1
	seed := uint64(42)
	next := func(n uint64) uint64 { // a small LCG: reproducible without math/rand's state
		seed = seed*6364136223846793005 + 1442695040888963407
		return (seed >> 33) % n
	}
	for round := 0; round < 2000; round++ {
		h := make([]int64, width)
		for k := 0; k < 1+int(next(6)); k++ {
			h[next(uint64(width))] += int64(1 + next(1000))
		}
		prev := -1.0
		for q := 0.01; q <= 1.0; q += 0.01 {
			v, ok := Quantile(h, q)
			if !ok || v < prev-1e-9 {
				t.Fatalf("histogram %v: q=%.2f gives %v after %v", h, q, v, prev)
			}
			prev = v
		}
		p50, _ := Quantile(h, 0.5)
		p95, _ := Quantile(h, 0.95)
		p99, _ := Quantile(h, 0.99)
		if !(p50 <= p95 && p95 <= p99) {
			t.Fatalf("histogram %v: p50 %v p95 %v p99 %v", h, p50, p95, p99)
		}
	}
}
