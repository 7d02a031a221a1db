package database

import (
	"testing"
	"time"
)

func TestRotationExpiry(t *testing.T) {
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	confirmed := Rotation{RequestedAt: at.Add(-time.Second), RotatedAt: at}
	pending := Rotation{RequestedAt: at}
	for _, tc := range []struct {
		name string
		r    Rotation
		now  time.Time
		want bool
	}{
		{"not confirmed by the zone yet", pending, at.Add(48 * time.Hour), false},
		{"just rotated", confirmed, at, false},
		{"a second short of 24 hours", confirmed, at.Add(OldPasswordLifetime - time.Second), false},
		{"24 hours to the second", confirmed, at.Add(OldPasswordLifetime), true},
		{"long after", confirmed, at.Add(72 * time.Hour), true},
	} {
		if got := tc.r.Expired(tc.now); got != tc.want {
			t.Errorf("%s: Expired = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRotationNextDeploy(t *testing.T) {
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	confirmed := Rotation{RotatedAt: at}
	for _, tc := range []struct {
		name     string
		r        Rotation
		created  time.Time
		rollback bool
		want     bool
	}{
		{"made after the rotation", confirmed, at.Add(time.Minute), false, true},
		{"made at the same instant", confirmed, at, false, true},
		{"made before (its snapshot has the old URL)", confirmed, at.Add(-time.Second), false, false},
		{"a rollback made after (an earlier snapshot)", confirmed, at.Add(time.Minute), true, false},
		{"the zone has not confirmed the rotation", Rotation{RequestedAt: at}, at.Add(time.Minute), false, false},
	} {
		if got := tc.r.NextDeploy(tc.created, tc.rollback); got != tc.want {
			t.Errorf("%s: NextDeploy = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCanRotate(t *testing.T) {
	for s, want := range map[Status]bool{
		StatusProvisioning: false, StatusReady: true, StatusReadOnly: true, StatusDeleting: false, StatusFailed: false,
	} {
		if got := CanRotate(s); got != want {
			t.Errorf("CanRotate(%s) = %v, want %v", s, got, want)
		}
	}
}
