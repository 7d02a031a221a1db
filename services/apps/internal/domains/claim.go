package domains

import "tori.dev/services/apps/internal/accounts"

// Claim is what decides whether a hostname may be added to an app, read with the account
// locked so two concurrent adds cannot both take the plan's last hostname.
type Claim struct {
	Account accounts.Account
	// Used counts the hostnames (pending and active) on the account's live apps.
	Used int64
	// OnThisApp: the app already has the hostname.
	OnThisApp bool
	// ActiveElsewhere: another app has the hostname active.
	ActiveElsewhere bool
}

// Check applies the rules of adding a hostname, in the order the contract answers them:
// a repeat, then the plan's limit, then another app's active hostname. Pending claims never
// block anyone.
func (c Claim) Check() error {
	if c.OnThisApp {
		return ErrExists
	}
	if c.Account.Plan == nil {
		return accounts.ErrPlanUnavailable
	}
	if c.Used >= c.Account.Plan.CustomDomains {
		return &accounts.LimitError{Kind: ErrDomainLimit, Limit: c.Account.Plan.CustomDomains, Plan: c.Account.Plan.Name}
	}
	if c.ActiveElsewhere {
		return ErrHostnameTaken
	}
	return nil
}

// Activation is a hostname with its app, as the events about it (activated, deactivated,
// verification failing) name it.
type Activation struct {
	AppID     string
	AccountID string
	Slug      string
	Hostname  string
}
