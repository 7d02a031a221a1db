package auth

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)

func TestDevicePollTiming(t *testing.T) {
	type poll struct {
		at        time.Duration // since the grant started
		want      error
		retryWant time.Duration // for slow_down
	}
	cases := []struct {
		name  string
		polls []poll
	}{
		{"at the interval", []poll{
			{0, ErrAuthorizationPending, 0},
			{5 * time.Second, ErrAuthorizationPending, 0},
			{10 * time.Second, ErrAuthorizationPending, 0},
		}},
		{"too fast: told how long is left", []poll{
			{0, ErrAuthorizationPending, 0},
			{1 * time.Second, ErrSlowDown, 4 * time.Second},
			{4500 * time.Millisecond, ErrSlowDown, 500 * time.Millisecond},
		}},
		{"a refused poll does not restart the interval", []poll{
			{0, ErrAuthorizationPending, 0},
			{1 * time.Second, ErrSlowDown, 4 * time.Second},
			{5 * time.Second, ErrAuthorizationPending, 0},
			{9 * time.Second, ErrSlowDown, 1 * time.Second},
			{10 * time.Second, ErrAuthorizationPending, 0},
		}},
		{"expiry", []poll{
			{0, ErrAuthorizationPending, 0},
			{DeviceCodeLifetime - time.Second, ErrAuthorizationPending, 0},
			{DeviceCodeLifetime + 5*time.Second, ErrExpiredToken, 0},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, _, _ := NewDeviceGrant("cli", t0)
			for i, p := range tc.polls {
				err := g.Poll(t0.Add(p.at))
				if !errors.Is(err, p.want) {
					t.Fatalf("poll %d at %s: got %v, want %v", i, p.at, err, p.want)
				}
				var sd *SlowDownError
				if errors.As(err, &sd) && sd.RetryAfter != p.retryWant {
					t.Fatalf("poll %d: retry after %s, want %s", i, sd.RetryAfter, p.retryWant)
				}
			}
		})
	}
}

func TestDeviceGrantLifecycle(t *testing.T) {
	g, deviceCode, userCode := NewDeviceGrant("cli", t0)
	if deviceCode == "" || string(g.DeviceHash) == deviceCode || string(g.UserHash) == userCode {
		t.Fatal("codes must be kept only as hashes")
	}
	if err := g.Approve("acc", "usr", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := g.Approve("acc", "usr", t0.Add(time.Minute)); err != nil {
		t.Fatalf("a repeated approval by the same account is harmless: %v", err)
	}
	if err := g.Approve("other", "usr2", t0.Add(time.Minute)); !errors.Is(err, ErrInvalidUserCode) {
		t.Fatalf("approval by another account: %v", err)
	}
	if err := g.Deny(t0.Add(time.Minute)); !errors.Is(err, ErrInvalidUserCode) {
		t.Fatalf("deny after approve: %v", err)
	}
	if err := g.Poll(t0.Add(2 * time.Minute)); err != nil {
		t.Fatalf("approved grant: %v", err)
	}
	g.Issue("tid")
	if err := g.Poll(t0.Add(3 * time.Minute)); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("second exchange: want access_denied, got %v", err)
	}

	d, _, _ := NewDeviceGrant("cli", t0)
	if err := d.Deny(t0); err != nil {
		t.Fatal(err)
	}
	if err := d.Poll(t0); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("denied grant: %v", err)
	}

	e, _, _ := NewDeviceGrant("cli", t0)
	if err := e.Approve("acc", "usr", t0.Add(DeviceCodeLifetime)); !errors.Is(err, ErrExpiredToken) {
		t.Fatalf("approve after expiry: %v", err)
	}
	a, _, _ := NewDeviceGrant("cli", t0)
	_ = a.Approve("acc", "usr", t0)
	if err := a.Poll(t0.Add(DeviceCodeLifetime)); !errors.Is(err, ErrExpiredToken) {
		t.Fatalf("approved but expired before the exchange: %v", err)
	}
}
