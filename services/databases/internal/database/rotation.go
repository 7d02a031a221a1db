package database

import "time"

// OldPasswordLifetime is the longest a rotated-out password works (decisions.md: "after 24
// hours, whichever is first").
const OldPasswordLifetime = 24 * time.Hour

// Rotation is a database's pending credential rotation: asked at RequestedAt, in force (the
// zone admits the new password and DATABASE_URL is being rewritten) from RotatedAt, zero
// until the zone confirms. While it is on record the old password works too.
type Rotation struct {
	DatabaseID  string
	AppID       string
	RequestedAt time.Time
	RotatedAt   time.Time
}

// Confirmed reports whether the zone has the new password in place.
func (r Rotation) Confirmed() bool { return !r.RotatedAt.IsZero() }

// Expired reports whether the old password's 24 hours are up at now.
func (r Rotation) Expired(now time.Time) bool {
	return r.Confirmed() && !now.Before(r.RotatedAt.Add(OldPasswordLifetime))
}

// NextDeploy reports whether a deploy created at createdAt is one whose going live retires
// the old password: it was made after the new password was in place (so its environment
// snapshot, taken when a deploy is created, has the new DATABASE_URL), and it is not a
// rollback, which runs an earlier deploy's snapshot and so the old password.
func (r Rotation) NextDeploy(createdAt time.Time, rollback bool) bool {
	return r.Confirmed() && !rollback && !createdAt.Before(r.RotatedAt)
}

// CanRotate reports whether a database in s may have its credentials rotated: it must
// exist on the zone and be going nowhere (a read-only one has its logins like a ready one).
func CanRotate(s Status) bool { return s == StatusReady || s == StatusReadOnly }
