package api

// The shapes below carry only the fields the command line reads or sends. Each one is checked
// against services/gateway/openapi.json by drift_test.go, so a renamed or removed field fails
// the build's tests rather than a customer's command.

type User struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

type Account struct {
	User          User   `json:"user"`
	Plan          string `json:"plan"`
	DefaultRegion string `json:"defaultRegion"`
}

type App struct {
	ID              string  `json:"id"`
	Slug            string  `json:"slug"`
	Name            string  `json:"name"`
	Region          string  `json:"region"`
	Zone            string  `json:"zone"`
	Status          string  `json:"status"`
	Framework       string  `json:"framework"`
	Kind            string  `json:"kind"`
	CurrentDeployID *string `json:"currentDeployId"`
	URL             string  `json:"url"`
	CreatedAt       string  `json:"createdAt"`
	// Team is the slug of the team that owns the app.
	Team string `json:"team"`
}

type AppCreate struct {
	Name   string `json:"name,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Region string `json:"region,omitempty"`
	// Team is the owning team's slug; left out, the caller's personal team.
	Team string `json:"team,omitempty"`
}

type DeleteResult struct {
	OK        bool `json:"ok"`
	Reclaimed bool `json:"reclaimed"`
}

type Deploy struct {
	ID         string   `json:"id"`
	AppID      string   `json:"appId"`
	Kind       string   `json:"kind"`
	Status     string   `json:"status"`
	Image      *string  `json:"image"`
	Release    []string `json:"release"`
	RollbackOf *string  `json:"rollbackOf"`
	Error      *string  `json:"error"`
	CreatedAt  string   `json:"createdAt"`
	FinishedAt *string  `json:"finishedAt"`
}

// Terminal reports whether the deploy will change no more (superseded included: it was live).
func (d Deploy) Terminal() bool {
	switch d.Status {
	case "live", "failed", "cancelled", "superseded":
		return true
	}
	return false
}

type ImageDeployRequest struct {
	Image        string `json:"image"`
	Release      string `json:"release,omitempty"`
	ForceRestart bool   `json:"forceRestart,omitempty"`
	// Processes are the image's process types, name to command; none: one web.
	Processes map[string]string `json:"processes,omitempty"`
}

// DeployForm names the multipart parts of an upload; its values are never marshalled.
type DeployForm struct {
	Files   []string `json:"files"`
	Source  string   `json:"source"`
	Release string   `json:"release"`
}

type LogEntry struct {
	ID        string  `json:"id"`
	Timestamp string  `json:"timestamp"`
	Stream    string  `json:"stream"`
	DeployID  *string `json:"deployId"`
	Message   string  `json:"message"`
	// Process is the instance that wrote the line (`web.1`, `worker.2`, `cron.<job>.<run>`);
	// nil for build, release and system lines of no instance.
	Process *string `json:"process"`
}

type LogPage struct {
	RetentionDays int        `json:"retentionDays"`
	Start         string     `json:"start"`
	End           string     `json:"end"`
	Entries       []LogEntry `json:"entries"`
	Next          *string    `json:"next"`
}

type EnvVar struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type DomainVerification struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

type Domain struct {
	Hostname     string             `json:"hostname"`
	Status       string             `json:"status"`
	Verification DomainVerification `json:"verification"`
	CreatedAt    string             `json:"createdAt"`
	// Certificate is the edge's HTTPS certificate for the hostname (nil from a server that
	// does not report it).
	Certificate *DomainCertificate `json:"certificate"`
}

// DomainCertificate is a hostname's certificate: pending, issued (until ExpiresAt) or failed
// (LastError says why; the edge retries).
type DomainCertificate struct {
	Status    string  `json:"status"`
	ExpiresAt *string `json:"expiresAt"`
	LastError *string `json:"lastError"`
}

// Summary is the certificate in a few words: "issued, until 2027-02-25".
func (c *DomainCertificate) Summary() string {
	switch {
	case c == nil:
		return "-"
	case c.Status == "issued" && c.ExpiresAt != nil && len(*c.ExpiresAt) >= 10:
		return "issued, until " + (*c.ExpiresAt)[:10]
	}
	return c.Status
}

// Database is an app's managed Postgres; its credentials never appear in an answer.
type Database struct {
	ID        string  `json:"id"`
	AppID     string  `json:"appId"`
	Status    string  `json:"status"`
	Message   *string `json:"message"`
	CreatedAt string  `json:"createdAt"`
}

type Dump struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	SizeBytes int64  `json:"sizeBytes"`
	CreatedAt string `json:"createdAt"`
}

type Restore struct {
	ID        string `json:"id"`
	DumpID    string `json:"dumpId"`
	Status    string `json:"status"`
	CreatedAt string `json:"createdAt"`
}

type RestoreCreate struct {
	DumpID string `json:"dumpId"`
}

// EnvChange is several variables set and unset at once.
type EnvChange struct {
	Set   map[string]string `json:"set,omitempty"`
	Unset []string          `json:"unset,omitempty"`
}

type DomainCreate struct {
	Hostname string `json:"hostname"`
}

// APIToken is one of the caller's tokens. A full token (made by a sign-in or `{name}` alone)
// has no Team, Scopes, Apps or ExpiresAt: it acts with its creator's role in each team.
type APIToken struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	CreatedAt  string   `json:"createdAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
	Team       *string  `json:"team"`
	Scopes     []string `json:"scopes"`
	Apps       []string `json:"apps"`
	ExpiresAt  *string  `json:"expiresAt"`
}

type DeviceRequest struct {
	ClientName string `json:"clientName,omitempty"`
}

type DeviceAuthorization struct {
	DeviceCode              string `json:"deviceCode"`
	UserCode                string `json:"userCode"`
	VerificationURI         string `json:"verificationUri"`
	VerificationURIComplete string `json:"verificationUriComplete"`
	ExpiresIn               int    `json:"expiresIn"`
	Interval                int    `json:"interval"`
}

type DeviceTokenRequest struct {
	DeviceCode string `json:"deviceCode"`
}

type LoopbackTokenRequest struct {
	Code         string `json:"code"`
	CodeVerifier string `json:"codeVerifier"`
	RedirectURI  string `json:"redirectUri"`
}

type CLIToken struct {
	Token   string `json:"token"`
	TokenID string `json:"tokenId"`
}

type Subscription struct {
	Plan              string `json:"plan"`
	Interval          string `json:"interval"`
	Status            string `json:"status"`
	CurrentPeriodEnd  string `json:"currentPeriodEnd"`
	CancelAtPeriodEnd bool   `json:"cancelAtPeriodEnd"`
}

type BillingHold struct {
	Since              string `json:"since"`
	Stage              string `json:"stage"`
	DeploysRefusedFrom string `json:"deploysRefusedFrom"`
	ServingStopsFrom   string `json:"servingStopsFrom"`
}

type BillingState struct {
	Plan         string        `json:"plan"`
	Subscription *Subscription `json:"subscription"`
	Hold         *BillingHold  `json:"hold"`
	Configured   bool          `json:"configured"`
}

type PlanPrices struct {
	Month float64 `json:"month"`
	Year  float64 `json:"year"`
}

type PlanLimits struct {
	Apps              int     `json:"apps"`
	CustomDomains     int     `json:"customDomains"`
	ConcurrentDeploys int     `json:"concurrentDeploys"`
	UploadBytes       int64   `json:"uploadBytes"`
	CPU               float64 `json:"cpu"`
	LogRetentionDays  int     `json:"logRetentionDays"`
}

type Plan struct {
	Name   string     `json:"name"`
	Prices PlanPrices `json:"prices"`
	Limits PlanLimits `json:"limits"`
}

type BillingTerms struct {
	Currency     string `json:"currency"`
	TaxInclusive bool   `json:"taxInclusive"`
}

type PlanCatalog struct {
	Billing BillingTerms `json:"billing"`
	Plans   []Plan       `json:"plans"`
}

// ErrorBody is every error the API answers.
type ErrorBody struct {
	Error             string `json:"error"`
	Code              string `json:"code"`
	Message           string `json:"message"`
	RetryAfter        *int   `json:"retryAfter"`
	RetryAfterSeconds *int   `json:"retryAfterSeconds"`
	// Field is the request field an invalid_parameter is about; Type the process type an
	// unknown_process_type names.
	Field string `json:"field"`
	Type  string `json:"type"`
	// RequiredRole and RequiredScope name what would have been enough for an
	// insufficient_role or insufficient_scope refusal.
	RequiredRole  string `json:"requiredRole"`
	RequiredScope string `json:"requiredScope"`
}
