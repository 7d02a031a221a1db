package httpapi

import (
	"tori.dev/contract/apitime"
	"tori.dev/services/deploys/internal/cron"
	"tori.dev/services/deploys/internal/usecase"
)

// cronJobView is the CronJob body of DESIGN38; nextRunAt is null while the job is disabled.
type cronJobView struct {
	Name              string        `json:"name"`
	Schedule          string        `json:"schedule"`
	Timezone          string        `json:"timezone"`
	Command           string        `json:"command"`
	ConcurrencyPolicy string        `json:"concurrencyPolicy"`
	TimeoutSeconds    int64         `json:"timeoutSeconds"`
	Enabled           bool          `json:"enabled"`
	NextRunAt         *apitime.Time `json:"nextRunAt"`
	LastRun           *cronRunView  `json:"lastRun"`
	CreatedAt         apitime.Time  `json:"createdAt"`
	UpdatedAt         apitime.Time  `json:"updatedAt"`
}

// cronRunView is the CronRun body of DESIGN38.
type cronRunView struct {
	ID           string        `json:"id"`
	Trigger      string        `json:"trigger"`
	ScheduledFor apitime.Time  `json:"scheduledFor"`
	Status       string        `json:"status"`
	SkipReason   *string       `json:"skipReason"`
	ExitCode     *int          `json:"exitCode"`
	StartedAt    *apitime.Time `json:"startedAt"`
	FinishedAt   *apitime.Time `json:"finishedAt"`
	DeployID     *string       `json:"deployId"`
}

func toCronJobView(v usecase.JobView) cronJobView {
	out := cronJobView{
		Name: v.Name, Schedule: v.Schedule, Timezone: v.Timezone, Command: v.Command, ConcurrencyPolicy: string(v.Policy),
		TimeoutSeconds: v.TimeoutSeconds, Enabled: v.Enabled, CreatedAt: apitime.Time(v.CreatedAt), UpdatedAt: apitime.Time(v.UpdatedAt),
	}
	if v.Enabled {
		out.NextRunAt = apitime.OrNull(v.NextRunAt)
	}
	if v.LastRun != nil {
		r := toCronRunView(*v.LastRun)
		out.LastRun = &r
	}
	return out
}

func toCronJobViews(vs []usecase.JobView) []cronJobView {
	out := make([]cronJobView, 0, len(vs))
	for _, v := range vs {
		out = append(out, toCronJobView(v))
	}
	return out
}

func toCronRunView(r cron.Run) cronRunView {
	return cronRunView{
		ID: r.ID, Trigger: string(r.Trigger), ScheduledFor: apitime.Time(r.ScheduledFor), Status: string(r.Status),
		SkipReason: orNull(string(r.SkipReason)), ExitCode: r.ExitCode, StartedAt: apitime.OrNull(r.StartedAt),
		FinishedAt: apitime.OrNull(r.FinishedAt), DeployID: orNull(r.DeployID),
	}
}

func toCronRunViews(rs []cron.Run) []cronRunView {
	out := make([]cronRunView, 0, len(rs))
	for _, r := range rs {
		out = append(out, toCronRunView(r))
	}
	return out
}
