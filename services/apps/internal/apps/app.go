package apps

import (
	"time"

	"tori.dev/services/apps/internal/accounts"
)

// Kinds of app. Kind is fixed at create.
const (
	KindStatic  = "static"
	KindService = "service"
)

// Statuses of an app. Only creation (to StatusDeploying) is this service's transition; the
// others follow deploys.
const (
	StatusRunning   = "running"
	StatusNapping   = "napping"
	StatusDeploying = "deploying"
	StatusError     = "error"
)

// FrameworkStatic is every new app's framework until a deploy shows otherwise; afterwards the
// framework is its live deploy's, as the deploys service detects it (RevisionState).
const FrameworkStatic = "static"

// Regions an app can live in.
var Regions = []string{"eu", "us"}

// ValidRegion reports whether r is a region.
func ValidRegion(r string) bool {
	for _, x := range Regions {
		if x == r {
			return true
		}
	}
	return false
}

// KindFor applies the create rule: `service` makes a service; anything else, including
// nothing, makes a static app.
func KindFor(requested string) string {
	if requested == KindService {
		return KindService
	}
	return KindStatic
}

// App is one live app.
type App struct {
	ID string
	// AccountID is the owning team's id (a personal team's id is its account's): the
	// column kept its name when teams came to own apps.
	AccountID       string
	Slug            string
	Name            string
	Region          string
	Zone            string
	Status          string
	Framework       string
	Kind            string
	CurrentDeployID *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Deletion is the outcome of a delete: the tombstone holds the slug until Reclaimed.
type Deletion struct {
	App       App
	DeletedAt time.Time
	// Pending names the services whose cleanup confirmation is still awaited.
	Pending   []string
	Reclaimed bool
}

// Limit applies the plan's app limit to an account with liveApps apps that are not deleted
// (tombstones do not count).
func Limit(acct accounts.Account, liveApps int64) error {
	if acct.Plan == nil {
		return accounts.ErrPlanUnavailable
	}
	if liveApps >= acct.Plan.Apps {
		return &accounts.LimitError{Kind: ErrAppLimit, Limit: acct.Plan.Apps, Plan: acct.Plan.Name}
	}
	return nil
}
