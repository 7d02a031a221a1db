package apps

import "time"

// RevisionEvent is one fact the deploys service or a zone reports about an app's revisions.
type RevisionEvent struct {
	Kind     RevisionEventKind
	DeployID string
	At       time.Time
	// For a deploy that ended without going live: whether some earlier deploy still serves.
	AppHasLiveDeploy bool
	// For a deploy that went live: the framework it showed (static when none); "" when the
	// event predates the field and said nothing.
	Framework string
}

// RevisionEventKind names what happened.
type RevisionEventKind int

const (
	// DeployStarted: a deploy was accepted and is building.
	DeployStarted RevisionEventKind = iota + 1
	// DeployWentLive: the deploy takes the app's traffic.
	DeployWentLive
	// DeployEnded: the deploy failed or was cancelled without going live.
	DeployEnded
	// AppNapped: the zone scaled the service to zero.
	AppNapped
	// AppWoke: the zone started it again.
	AppWoke
)

// RevisionState is the part of an app that follows its deploys. StatusAt and CurrentAt are
// the times of the events that last set Status and CurrentDeployID (and Framework, which is
// the current deploy's): events may arrive out of order, and an older one never overwrites
// what a newer one set.
type RevisionState struct {
	Status          string
	StatusAt        time.Time
	CurrentDeployID *string
	CurrentAt       time.Time
	Framework       string
}

// Apply returns the state after ev.
//
//   - deploying until a deploy first lands; a deploy that ends without landing while nothing
//     serves is an error, and the next deploy makes the app deploying again;
//   - running once a deploy is live, which also becomes the current deploy and gives the app
//     its framework (decisions.md: static until a deploy shows otherwise, and back to static
//     when a live deploy shows none; a rollback shows its target's); later deploys building
//     or failing leave a serving app running;
//   - napping while the zone has scaled a live service to zero, running when it wakes.
func (s RevisionState) Apply(ev RevisionEvent) RevisionState {
	next := s
	setStatus := func(status string) {
		if ev.At.Before(s.StatusAt) {
			return
		}
		next.Status, next.StatusAt = status, ev.At
	}
	switch ev.Kind {
	case DeployWentLive:
		if !ev.At.Before(s.CurrentAt) {
			id := ev.DeployID
			next.CurrentDeployID, next.CurrentAt = &id, ev.At
			if ev.Framework != "" {
				next.Framework = ev.Framework
			}
			setStatus(StatusRunning)
		}
	case DeployStarted:
		if s.CurrentDeployID == nil {
			setStatus(StatusDeploying)
		}
	case DeployEnded:
		if s.CurrentDeployID == nil && !ev.AppHasLiveDeploy {
			setStatus(StatusError)
		}
	case AppNapped:
		if s.CurrentDeployID != nil {
			setStatus(StatusNapping)
		}
	case AppWoke:
		if s.CurrentDeployID != nil {
			setStatus(StatusRunning)
		}
	}
	return next
}
