package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRetryDelayDoublesUpToItsCap(t *testing.T) {
	base := 200 * time.Millisecond
	for attempt, want := range map[int]time.Duration{
		1: 200 * time.Millisecond, 2: 400 * time.Millisecond, 3: 800 * time.Millisecond,
		8: 25600 * time.Millisecond, 9: maxRetryDelay, 40: maxRetryDelay,
	} {
		if got := retryDelay(base, attempt); got != want {
			t.Errorf("retryDelay(%v, %d) = %v, want %v", base, attempt, got, want)
		}
	}
}

func TestRetryingFollowsThePolicy(t *testing.T) {
	flaky := errors.New("flaky")
	infra := infraError{errors.New("database away")}
	cases := []struct {
		name     string
		results  []error // what each try returns in turn; the last repeats
		failed   int     // attempts already failed before retrying starts
		firstErr error
		waitOK   bool
		want     verdict
		tries    int
		waits    []time.Duration // the handler-failure waits (infra waits are jittered)
	}{
		{name: "succeeds at once", results: []error{nil}, waitOK: true, want: verdict{attempts: 1}, tries: 1},
		{name: "succeeds on the third attempt", results: []error{flaky, flaky, nil}, waitOK: true,
			want: verdict{attempts: 3}, tries: 3, waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{name: "out of attempts", results: []error{flaky}, waitOK: true,
			want: verdict{err: flaky, attempts: 4}, tries: 4,
			waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "permanent at once", results: []error{Permanent(flaky)}, waitOK: true,
			want: verdict{err: Permanent(flaky), attempts: 1}, tries: 1},
		{name: "a refusal is no attempt", results: []error{refusal{flaky}}, waitOK: true,
			want: verdict{err: flaky, refused: true}, tries: 1},
		{name: "the bus's own trouble costs no attempt", results: []error{infra, infra, flaky, nil}, waitOK: true,
			want: verdict{attempts: 2}, tries: 4, waits: []time.Duration{100 * time.Millisecond}},
		{name: "a batch's failed attempt counts", results: []error{nil}, failed: 1, firstErr: flaky, waitOK: true,
			want: verdict{attempts: 2}, tries: 1, waits: []time.Duration{100 * time.Millisecond}},
		{name: "the session ends while waiting", results: []error{flaky}, waitOK: false, want: verdict{left: true}, tries: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var waits []time.Duration // after a handler's failure; infra waits are jittered
			var lastInfra bool
			retried := prometheus.NewCounter(prometheus.CounterOpts{Name: "retried"})
			tries := 0
			retry := retrying(retryPolicy{
				maxAttempts: 4,
				base:        100 * time.Millisecond,
				wait: func(_ context.Context, _ *message, d time.Duration) bool {
					if !lastInfra {
						waits = append(waits, d)
					}
					return tc.waitOK
				},
				retried: retried,
			}, func(_ context.Context, _ *message, n int) error {
				tries++
				err := tc.results[min(tries, len(tc.results))-1]
				var ie infraError
				lastInfra = errors.As(err, &ie)
				return err
			})
			got := retry(context.Background(), testMessage("m1", "apps", "apps.x"), tc.failed, tc.firstErr)
			if got.attempts != tc.want.attempts || got.refused != tc.want.refused || got.left != tc.want.left ||
				fmt.Sprint(got.err) != fmt.Sprint(tc.want.err) || IsPermanent(got.err) != IsPermanent(tc.want.err) {
				t.Fatalf("verdict %+v, want %+v", got, tc.want)
			}
			if tries != tc.tries {
				t.Fatalf("%d tries, want %d", tries, tc.tries)
			}
			if tc.waitOK && !slices.Equal(waits, tc.waits) {
				t.Fatalf("waits %v, want %v", waits, tc.waits)
			}
			if want := float64(len(tc.waits)); tc.waitOK && testutil.ToFloat64(retried) != want {
				t.Fatalf("retried counted %v, want %v", testutil.ToFloat64(retried), want)
			}
		})
	}
}
