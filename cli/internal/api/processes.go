package api

import (
	"context"
	"net/url"
	"strconv"
)

// The shapes and calls of an app's processes (its formation) and cron jobs, owned by the
// deploys service. Checked against the document by drift_test.go like every other shape.

// FormationEntry is one process type of the live deploy: how many instances it should run
// (Quantity) and how many the zone last reported up (Running).
type FormationEntry struct {
	Type      string `json:"type"`
	Command   string `json:"command"`
	Quantity  int    `json:"quantity"`
	Running   int    `json:"running"`
	UpdatedAt string `json:"updatedAt"`
}

// FormationChange sets one type's quantity.
type FormationChange struct {
	Type     string `json:"type"`
	Quantity int    `json:"quantity"`
}

// FormationUpdate is a scale: every change applies or none does.
type FormationUpdate struct {
	Updates []FormationChange `json:"updates"`
}

// CronRun is one due tick or manual run of a cron job; a skipped tick has SkipReason.
type CronRun struct {
	ID           string  `json:"id"`
	Trigger      string  `json:"trigger"`
	ScheduledFor string  `json:"scheduledFor"`
	Status       string  `json:"status"`
	SkipReason   *string `json:"skipReason"`
	ExitCode     *int    `json:"exitCode"`
	StartedAt    *string `json:"startedAt"`
	FinishedAt   *string `json:"finishedAt"`
	DeployID     *string `json:"deployId"`
}

type CronJob struct {
	Name              string   `json:"name"`
	Schedule          string   `json:"schedule"`
	Timezone          string   `json:"timezone"`
	Command           string   `json:"command"`
	ConcurrencyPolicy string   `json:"concurrencyPolicy"`
	TimeoutSeconds    int      `json:"timeoutSeconds"`
	Enabled           bool     `json:"enabled"`
	NextRunAt         *string  `json:"nextRunAt"`
	LastRun           *CronRun `json:"lastRun"`
	CreatedAt         string   `json:"createdAt"`
}

// CronJobCreate leaves out what is not given, so the API's defaults apply (UTC, forbid, the
// plan's timeout, enabled).
type CronJobCreate struct {
	Name              string `json:"name"`
	Schedule          string `json:"schedule"`
	Timezone          string `json:"timezone,omitempty"`
	Command           string `json:"command"`
	ConcurrencyPolicy string `json:"concurrencyPolicy,omitempty"`
	TimeoutSeconds    int    `json:"timeoutSeconds,omitempty"`
}

var (
	OpGetFormation   = &Operation{Method: "GET", Path: "/api/apps/{slug}/formation", Response: []FormationEntry{}}
	OpScaleFormation = &Operation{Method: "PATCH", Path: "/api/apps/{slug}/formation", Request: FormationUpdate{}, Response: []FormationEntry{}}
	OpListCronJobs   = &Operation{Method: "GET", Path: "/api/apps/{slug}/crons", Response: []CronJob{}}
	OpCreateCronJob  = &Operation{Method: "POST", Path: "/api/apps/{slug}/crons", Request: CronJobCreate{}, Response: CronJob{}}
	OpDeleteCronJob  = &Operation{Method: "DELETE", Path: "/api/apps/{slug}/crons/{name}"}
	OpRunCronJob     = &Operation{Method: "POST", Path: "/api/apps/{slug}/crons/{name}/runs", Response: CronRun{}}
	OpListCronRuns   = &Operation{Method: "GET", Path: "/api/apps/{slug}/crons/{name}/runs", Response: []CronRun{}, Query: []string{"limit"}}
)

func (c *Client) Formation(ctx context.Context, slug string) ([]FormationEntry, Raw, error) {
	return call[[]FormationEntry](ctx, c, req{op: OpGetFormation, params: []string{slug}})
}

// Scale sets the quantities in one request; the answer is the whole formation after it.
func (c *Client) Scale(ctx context.Context, slug string, changes []FormationChange) ([]FormationEntry, Raw, error) {
	return call[[]FormationEntry](ctx, c, req{op: OpScaleFormation, params: []string{slug}, body: FormationUpdate{Updates: changes}})
}

func (c *Client) ListCronJobs(ctx context.Context, slug string) ([]CronJob, Raw, error) {
	return call[[]CronJob](ctx, c, req{op: OpListCronJobs, params: []string{slug}})
}

func (c *Client) CreateCronJob(ctx context.Context, slug string, in CronJobCreate) (CronJob, Raw, error) {
	return call[CronJob](ctx, c, req{op: OpCreateCronJob, params: []string{slug}, body: in})
}

func (c *Client) DeleteCronJob(ctx context.Context, slug, name string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpDeleteCronJob, params: []string{slug, name}})
	return err
}

// RunCronJob starts a manual run now.
func (c *Client) RunCronJob(ctx context.Context, slug, name string) (CronRun, Raw, error) {
	return call[CronRun](ctx, c, req{op: OpRunCronJob, params: []string{slug, name}})
}

// ListCronRuns is the job's runs, newest first; limit 0 leaves the API's default.
func (c *Client) ListCronRuns(ctx context.Context, slug, name string, limit int) ([]CronRun, Raw, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return call[[]CronRun](ctx, c, req{op: OpListCronRuns, params: []string{slug, name}, query: q})
}
