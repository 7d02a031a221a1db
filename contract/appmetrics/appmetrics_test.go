package appmetrics

import "testing"

func TestBucket(t *testing.T) {
	cases := map[float64]int{0: 0, 1: 0, 1.5: 1, 49: 6, 50: 6, 51: 7, 30000: len(LatencyBoundsMillis) - 1, 30001: len(LatencyBoundsMillis)}
	for ms, want := range cases {
		if got := Bucket(ms); got != want {
			t.Errorf("Bucket(%v) = %d, want %d", ms, got, want)
		}
	}
	for i := 1; i < len(LatencyBoundsMillis); i++ {
		if LatencyBoundsMillis[i] <= LatencyBoundsMillis[i-1] {
			t.Fatalf("bounds not increasing at %d", i)
		}
	}
}

func TestStatusClass(t *testing.T) {
	cases := map[int]int{99: -1, 100: 0, 200: 1, 204: 1, 301: 2, 404: 3, 503: 4, 599: 4, 600: -1}
	for s, want := range cases {
		if got := StatusClass(s); got != want {
			t.Errorf("StatusClass(%d) = %d, want %d", s, got, want)
		}
	}
}
