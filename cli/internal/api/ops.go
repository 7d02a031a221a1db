package api

import (
	"context"
	"net/url"
	"strconv"
)

// Operation is one route of the OpenAPI document as the client uses it. Every request goes
// through one of the values in Operations, and drift_test.go checks each against the document:
// the route, the query parameters, and the field names of the body sent and the answer read.
type Operation struct {
	Method string
	Path   string
	// Public operations are sent without a token.
	Public bool
	// Request is the JSON body's type (nil: no body); Form the multipart parts' names.
	Request any
	Form    any
	// Response is the type the answer is decoded into (nil: nothing read).
	Response any
	Query    []string
}

var (
	OpGetAccount   = &Operation{Method: "GET", Path: "/api/account", Response: Account{}}
	OpListApps     = &Operation{Method: "GET", Path: "/api/apps", Response: []App{}, Query: []string{"team"}}
	OpCreateApp    = &Operation{Method: "POST", Path: "/api/apps", Request: AppCreate{}, Response: App{}}
	OpGetApp       = &Operation{Method: "GET", Path: "/api/apps/{slug}", Response: App{}}
	OpDeleteApp    = &Operation{Method: "DELETE", Path: "/api/apps/{slug}", Response: DeleteResult{}}
	OpListDeploys  = &Operation{Method: "GET", Path: "/api/apps/{slug}/deploys", Response: []Deploy{}, Query: []string{"limit", "before"}}
	OpCreateImage  = &Operation{Method: "POST", Path: "/api/apps/{slug}/deploys", Request: ImageDeployRequest{}, Response: Deploy{}}
	OpUpload       = &Operation{Method: "POST", Path: "/api/apps/{slug}/deploys", Form: DeployForm{}, Response: Deploy{}}
	OpGetDeploy    = &Operation{Method: "GET", Path: "/api/apps/{slug}/deploys/{id}", Response: Deploy{}}
	OpCancelDeploy = &Operation{Method: "POST", Path: "/api/apps/{slug}/deploys/{id}/cancel", Response: Deploy{}}
	OpRollback     = &Operation{Method: "POST", Path: "/api/apps/{slug}/deploys/{id}/rollback", Response: Deploy{}}
	OpLogs         = &Operation{Method: "GET", Path: "/api/apps/{slug}/logs", Response: LogPage{}, Query: []string{"start", "end", "limit", "cursor", "process"}}
	// OpLogStream answers Server-Sent Events, read by OpenLogStream, never decoded whole.
	OpLogStream     = &Operation{Method: "GET", Path: "/api/apps/{slug}/logs/stream", Query: []string{"start", "end", "cursor", "process"}}
	OpListEnv       = &Operation{Method: "GET", Path: "/api/apps/{slug}/env", Response: []EnvVar{}}
	OpPutEnv        = &Operation{Method: "PUT", Path: "/api/apps/{slug}/env", Request: EnvVar{}, Response: EnvVar{}}
	OpDeleteEnv     = &Operation{Method: "DELETE", Path: "/api/apps/{slug}/env/{key}"}
	OpChangeEnv     = &Operation{Method: "PATCH", Path: "/api/apps/{slug}/env", Request: EnvChange{}, Response: []EnvVar{}}
	OpListDomains   = &Operation{Method: "GET", Path: "/api/apps/{slug}/domains", Response: []Domain{}}
	OpAddDomain     = &Operation{Method: "POST", Path: "/api/apps/{slug}/domains", Request: DomainCreate{}, Response: Domain{}}
	OpRemoveDomain  = &Operation{Method: "DELETE", Path: "/api/apps/{slug}/domains/{hostname}"}
	OpListTokens    = &Operation{Method: "GET", Path: "/api/tokens", Response: []APIToken{}}
	OpRevokeToken   = &Operation{Method: "DELETE", Path: "/api/tokens/{id}"}
	OpDevice        = &Operation{Method: "POST", Path: "/api/auth/cli/device", Public: true, Request: DeviceRequest{}, Response: DeviceAuthorization{}}
	OpDeviceToken   = &Operation{Method: "POST", Path: "/api/auth/cli/token", Public: true, Request: DeviceTokenRequest{}, Response: CLIToken{}}
	OpLoopbackToken = &Operation{Method: "POST", Path: "/api/auth/cli/token", Public: true, Request: LoopbackTokenRequest{}, Response: CLIToken{}}
	OpBilling       = &Operation{Method: "GET", Path: "/api/billing", Response: BillingState{}, Query: []string{"team"}}
	OpCreateDB      = &Operation{Method: "POST", Path: "/api/apps/{slug}/database", Response: Database{}}
	OpGetDB         = &Operation{Method: "GET", Path: "/api/apps/{slug}/database", Response: Database{}}
	OpDeleteDB      = &Operation{Method: "DELETE", Path: "/api/apps/{slug}/database", Response: Database{}}
	OpRotateDB      = &Operation{Method: "POST", Path: "/api/apps/{slug}/database/credentials/rotate", Response: Database{}}
	OpListDumps     = &Operation{Method: "GET", Path: "/api/apps/{slug}/database/dumps", Response: []Dump{}}
	OpTakeDump      = &Operation{Method: "POST", Path: "/api/apps/{slug}/database/dumps", Response: Dump{}}
	OpRestoreDump   = &Operation{Method: "POST", Path: "/api/apps/{slug}/database/restores", Request: RestoreCreate{}, Response: Restore{}}
	OpPlans         = &Operation{Method: "GET", Path: "/api/plans", Public: true, Response: PlanCatalog{}}
)

// Operations is every operation the client can send.
var Operations = []*Operation{
	OpGetAccount, OpListApps, OpCreateApp, OpGetApp, OpDeleteApp, OpListDeploys, OpCreateImage,
	OpUpload, OpGetDeploy, OpCancelDeploy, OpRollback, OpLogs, OpLogStream, OpListEnv, OpPutEnv, OpDeleteEnv, OpChangeEnv,
	OpListDomains, OpAddDomain, OpRemoveDomain, OpListTokens, OpRevokeToken, OpDevice,
	OpDeviceToken, OpLoopbackToken, OpBilling, OpPlans, OpCreateDB, OpGetDB, OpDeleteDB, OpRotateDB,
	OpListDumps, OpTakeDump, OpRestoreDump,
	OpGetFormation, OpScaleFormation, OpListCronJobs, OpCreateCronJob, OpDeleteCronJob, OpRunCronJob, OpListCronRuns,
	OpListTeams, OpCreateTeam, OpGetTeam, OpRenameTeam, OpDeleteTeam, OpListMembers, OpSetMemberRole, OpRemoveMember,
	OpListInvitations, OpInvite, OpRevokeInvitation, OpAcceptInvitation, OpListTeamTokens, OpRevokeTeamToken, OpAudit,
	OpCreateToken,
	OpListPreviews, OpPreviewImage, OpPreviewUpload, OpGetPreview, OpSetPreviewTTL, OpDeletePreview, OpPromotePreview,
	OpListDrains, OpCreateDrain, OpDeleteDrain, OpTestDrain, OpMetrics,
}

func (c *Client) Account(ctx context.Context) (Account, Raw, error) {
	return call[Account](ctx, c, req{op: OpGetAccount})
}

// ListApps lists the apps of every team the caller may see, or of team alone.
func (c *Client) ListApps(ctx context.Context, team string) ([]App, Raw, error) {
	return call[[]App](ctx, c, req{op: OpListApps, query: teamQuery(team)})
}

func (c *Client) CreateApp(ctx context.Context, in AppCreate) (App, Raw, error) {
	return call[App](ctx, c, req{op: OpCreateApp, body: in})
}

func (c *Client) GetApp(ctx context.Context, slug string) (App, Raw, error) {
	return call[App](ctx, c, req{op: OpGetApp, params: []string{slug}})
}

func (c *Client) DeleteApp(ctx context.Context, slug string) (DeleteResult, Raw, error) {
	return call[DeleteResult](ctx, c, req{op: OpDeleteApp, params: []string{slug}})
}

func (c *Client) ListDeploys(ctx context.Context, slug string, limit int) ([]Deploy, Raw, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return call[[]Deploy](ctx, c, req{op: OpListDeploys, params: []string{slug}, query: q})
}

func (c *Client) DeployImage(ctx context.Context, slug string, in ImageDeployRequest) (Deploy, Raw, error) {
	return call[Deploy](ctx, c, req{op: OpCreateImage, params: []string{slug}, body: in})
}

// Upload sends a multipart deploy; the upload's body is made afresh for a retry.
func (c *Client) Upload(ctx context.Context, slug string, up *Upload) (Deploy, Raw, error) {
	return call[Deploy](ctx, c, req{op: OpUpload, params: []string{slug}, upload: up})
}

func (c *Client) GetDeploy(ctx context.Context, slug, id string) (Deploy, Raw, error) {
	return call[Deploy](ctx, c, req{op: OpGetDeploy, params: []string{slug, id}})
}

func (c *Client) CancelDeploy(ctx context.Context, slug, id string) (Deploy, Raw, error) {
	return call[Deploy](ctx, c, req{op: OpCancelDeploy, params: []string{slug, id}})
}

func (c *Client) Rollback(ctx context.Context, slug, id string) (Deploy, Raw, error) {
	return call[Deploy](ctx, c, req{op: OpRollback, params: []string{slug, id}})
}

// LogQuery is one page's window; empty fields are left to the API's defaults. Process keeps
// one process's lines (`worker.2`) or one type's (`worker`, `cron`).
type LogQuery struct {
	Start, End, Cursor, Process string
	Limit                       int
}

func (c *Client) Logs(ctx context.Context, slug string, lq LogQuery) (LogPage, Raw, error) {
	q := url.Values{}
	for k, v := range map[string]string{"start": lq.Start, "end": lq.End, "cursor": lq.Cursor, "process": lq.Process} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if lq.Limit > 0 {
		q.Set("limit", strconv.Itoa(lq.Limit))
	}
	return call[LogPage](ctx, c, req{op: OpLogs, params: []string{slug}, query: q})
}

func (c *Client) ListEnv(ctx context.Context, slug string) ([]EnvVar, Raw, error) {
	return call[[]EnvVar](ctx, c, req{op: OpListEnv, params: []string{slug}})
}

func (c *Client) SetEnv(ctx context.Context, slug, key, value string) (EnvVar, Raw, error) {
	return call[EnvVar](ctx, c, req{op: OpPutEnv, params: []string{slug}, body: EnvVar{Key: key, Value: value}})
}

// ChangeEnv sets and unsets several variables in one request: all of them or none.
func (c *Client) ChangeEnv(ctx context.Context, slug string, in EnvChange) ([]EnvVar, Raw, error) {
	return call[[]EnvVar](ctx, c, req{op: OpChangeEnv, params: []string{slug}, body: in})
}

func (c *Client) UnsetEnv(ctx context.Context, slug, key string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpDeleteEnv, params: []string{slug, key}})
	return err
}

func (c *Client) ListDomains(ctx context.Context, slug string) ([]Domain, Raw, error) {
	return call[[]Domain](ctx, c, req{op: OpListDomains, params: []string{slug}})
}

func (c *Client) AddDomain(ctx context.Context, slug, hostname string) (Domain, Raw, error) {
	return call[Domain](ctx, c, req{op: OpAddDomain, params: []string{slug}, body: DomainCreate{Hostname: hostname}})
}

func (c *Client) RemoveDomain(ctx context.Context, slug, hostname string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpRemoveDomain, params: []string{slug, hostname}})
	return err
}

// Database calls the database operation op of the app (create, get, delete, rotate).
func (c *Client) Database(ctx context.Context, op *Operation, slug string) (Database, Raw, error) {
	return call[Database](ctx, c, req{op: op, params: []string{slug}})
}

func (c *Client) ListDumps(ctx context.Context, slug string) ([]Dump, Raw, error) {
	return call[[]Dump](ctx, c, req{op: OpListDumps, params: []string{slug}})
}

func (c *Client) TakeDump(ctx context.Context, slug string) (Dump, Raw, error) {
	return call[Dump](ctx, c, req{op: OpTakeDump, params: []string{slug}})
}

func (c *Client) RestoreDump(ctx context.Context, slug, dumpID string) (Restore, Raw, error) {
	return call[Restore](ctx, c, req{op: OpRestoreDump, params: []string{slug}, body: RestoreCreate{DumpID: dumpID}})
}

func (c *Client) ListTokens(ctx context.Context) ([]APIToken, Raw, error) {
	return call[[]APIToken](ctx, c, req{op: OpListTokens})
}

func (c *Client) RevokeToken(ctx context.Context, id string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpRevokeToken, params: []string{id}})
	return err
}

func (c *Client) StartDevice(ctx context.Context, clientName string) (DeviceAuthorization, Raw, error) {
	return call[DeviceAuthorization](ctx, c, req{op: OpDevice, body: DeviceRequest{ClientName: clientName}})
}

// PollDevice asks once; a 429 (slow_down) comes back as an error for the caller to pace by.
func (c *Client) PollDevice(ctx context.Context, deviceCode string) (CLIToken, Raw, error) {
	return call[CLIToken](ctx, c, req{op: OpDeviceToken, body: DeviceTokenRequest{DeviceCode: deviceCode}, noRetry: true})
}

func (c *Client) LoopbackToken(ctx context.Context, in LoopbackTokenRequest) (CLIToken, Raw, error) {
	return call[CLIToken](ctx, c, req{op: OpLoopbackToken, body: in})
}

// Billing is team's billing ("" the caller's personal team), which its owners see.
func (c *Client) Billing(ctx context.Context, team string) (BillingState, Raw, error) {
	return call[BillingState](ctx, c, req{op: OpBilling, query: teamQuery(team)})
}

func (c *Client) Plans(ctx context.Context) (PlanCatalog, Raw, error) {
	return call[PlanCatalog](ctx, c, req{op: OpPlans})
}
