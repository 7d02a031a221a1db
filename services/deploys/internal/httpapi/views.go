package httpapi

import (
	"time"

	"tori.dev/contract/apitime"
	"tori.dev/services/deploys/internal/deploy"
)

// deployView is the Deploy body of decisions.md; unset members are null.
type deployView struct {
	ID         string   `json:"id"`
	AppID      string   `json:"appId"`
	Kind       string   `json:"kind"`
	Status     string   `json:"status"`
	Image      *string  `json:"image"`
	Release    []string `json:"release"`
	RollbackOf *string  `json:"rollbackOf"`
	Error      *string  `json:"error"`
	CreatedAt  string   `json:"createdAt"`
	UpdatedAt  string   `json:"updatedAt"`
	FinishedAt *string  `json:"finishedAt"`
	// Build is how the zone builds and starts a source deploy; null until it has looked at
	// the tree, and for static and image deploys.
	Build *buildView `json:"build"`
}

// buildView is a source deploy's build: what was detected, the build command (null when
// nothing is built) and the start command.
type buildView struct {
	Detected string  `json:"detected"`
	Command  *string `json:"command"`
	Start    string  `json:"start"`
}

func toBuildView(b *deploy.Build) *buildView {
	if b == nil {
		return nil
	}
	return &buildView{Detected: b.Detected, Command: orNull(b.Command), Start: b.Start}
}

func toView(d *deploy.Deploy) deployView {
	return deployView{
		ID: d.ID, AppID: d.AppID, Kind: string(d.Kind), Status: string(d.Status),
		Image: orNull(d.Image), Release: d.Release, RollbackOf: orNull(d.RollbackOf), Error: orNull(d.Error),
		CreatedAt: apitime.Format(d.CreatedAt), UpdatedAt: apitime.Format(d.UpdatedAt),
		FinishedAt: timeOrNull(d.FinishedAt), Build: toBuildView(d.Build),
	}
}

func toViews(ds []*deploy.Deploy) []deployView {
	out := make([]deployView, 0, len(ds))
	for _, d := range ds {
		out = append(out, toView(d))
	}
	return out
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func timeOrNull(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := apitime.Format(*t)
	return &s
}
