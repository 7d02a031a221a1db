package bus

import (
	"context"
	"errors"
	"testing"
)

func TestDeadLetteringParksOnlyWhatRetryGaveUpOn(t *testing.T) {
	reason := errors.New("out of attempts")
	cases := []struct {
		name     string
		verdict  verdict
		park     outcome // what the dead-letter queue answers
		want     outcome
		parked   bool
		attempts int
	}{
		{"handled", verdict{attempts: 2}, ended, ended, false, 0},
		{"left for redelivery", verdict{left: true}, ended, left, false, 0},
		{"given up on", verdict{err: reason, attempts: 5}, ended, ended, true, 5},
		{"refused", verdict{err: reason, refused: true}, ended, ended, true, 0},
		{"the queue will not take it", verdict{err: reason, attempts: 5}, notParked, notParked, true, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parked, attempts := false, -1
			settle := deadLettering(
				func(_ *message, r error, n int) outcome { parked, attempts = r == reason, n; return tc.park },
				func(context.Context, *message, int, error) verdict { return tc.verdict },
			)
			got := settle(context.Background(), testMessage("m1", "apps", "apps.x"), 0, nil)
			if got != tc.want || parked != tc.parked || (tc.parked && attempts != tc.attempts) {
				t.Fatalf("outcome %v parked %v after %d attempts; want %v, %v, %d", got, parked, attempts, tc.want, tc.parked, tc.attempts)
			}
		})
	}
}
