package deploy

import (
	"fmt"
	"time"
)

// allowed is every transition the state machine permits; anything else is refused. A deploy
// reaches live only through releasing, so a revision never takes traffic unreleased.
var allowed = map[Status][]Status{
	Building:  {Releasing, Failed, Cancelled},
	Releasing: {Live, Failed, Cancelled},
	Live:      {Superseded},
}

// CanTransition reports whether from → to is a permitted move.
func CanTransition(from, to Status) bool {
	for _, s := range allowed[from] {
		if s == to {
			return true
		}
	}
	return false
}

// transition moves d to `to` at now or explains why not.
func (d *Deploy) transition(to Status, now time.Time) error {
	if d.Status.Terminal() {
		return fmt.Errorf("%w: %s is final", ErrTerminal, d.Status)
	}
	if !CanTransition(d.Status, to) {
		return fmt.Errorf("%w: %s → %s", ErrInvalidTransition, d.Status, to)
	}
	d.Status = to
	d.UpdatedAt = now
	if (to == Live || to.Terminal()) && d.FinishedAt == nil {
		t := now
		d.FinishedAt = &t
	}
	if to == Live {
		t := now
		d.LiveAt = &t
	}
	return nil
}

// StartRelease records that the zone has built the revision and runs its release step.
func (d *Deploy) StartRelease(now time.Time) error { return d.transition(Releasing, now) }

// GoLive puts d live. current is the app's live deploy, if any. When current is newer than
// d, d must not replace it: GoLive refuses with ErrNewerLive and the caller cancels d.
func (d *Deploy) GoLive(now time.Time, current *Deploy) error {
	if current != nil && current.ID != d.ID && current.NewerThan(d) {
		return ErrNewerLive
	}
	return d.transition(Live, now)
}

// RequestActivation records that the zone is told to switch traffic to d's prepared
// revision. It stays releasing (the API says live only once the edge serves it); current is
// the app's live deploy, and one newer than d refuses with ErrNewerLive as GoLive does. It
// reports false when the zone was told already (a repeated ready report).
func (d *Deploy) RequestActivation(now time.Time, current *Deploy) (bool, error) {
	if d.Status != Releasing {
		return false, fmt.Errorf("%w: %s → activating", ErrInvalidTransition, d.Status)
	}
	if current != nil && current.ID != d.ID && current.NewerThan(d) {
		return false, ErrNewerLive
	}
	if d.ActivatingAt != nil {
		return false, nil
	}
	t := now
	d.ActivatingAt = &t
	d.UpdatedAt = now
	return true, nil
}

// CancelByCustomer is Cancel as the customer asks it. Once the zone has been told to switch
// traffic to the revision the switch may already serve it, so the deploy is no longer the
// customer's to stop: it goes live, and a rollback undoes it.
func (d *Deploy) CancelByCustomer(now time.Time) error {
	if d.Status.Open() && d.ActivatingAt != nil {
		return fmt.Errorf("%w: traffic is being switched to it", ErrNotCancellable)
	}
	return d.Cancel(now)
}

// Supersede records that a newer deploy replaced d as the live one.
func (d *Deploy) Supersede(now time.Time) error { return d.transition(Superseded, now) }

// Fail ends an open deploy with an error code.
func (d *Deploy) Fail(now time.Time, code string) error {
	if err := d.transition(Failed, now); err != nil {
		return err
	}
	d.Error = code
	return nil
}

// Cancel ends an open deploy at the customer's request, or because a newer deploy went live
// first. Only building and releasing deploys can be cancelled.
func (d *Deploy) Cancel(now time.Time) error {
	if !d.Status.Open() {
		return fmt.Errorf("%w: deploy is %s", ErrNotCancellable, d.Status)
	}
	return d.transition(Cancelled, now)
}

// Expire closes d when it is still open at its deadline. It reports whether it did.
func (d *Deploy) Expire(now time.Time) bool {
	if !d.Status.Open() || now.Before(d.DeadlineAt()) {
		return false
	}
	return d.Fail(now, ErrCodeDeadline) == nil
}

// ServePreview records that the zone prepared a preview's revision and is told to serve it at
// the preview's host. Only an open preview revision may; it finishes there, never live.
func (d *Deploy) ServePreview(now time.Time) error {
	if d.PreviewID == "" || !d.Status.Open() {
		return fmt.Errorf("%w: %s → previewing", ErrInvalidTransition, d.Status)
	}
	d.Status, d.UpdatedAt = Previewing, now
	if d.FinishedAt == nil {
		t := now
		d.FinishedAt = &t
	}
	return nil
}
