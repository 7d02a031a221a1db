package account

import "time"

// Limits are the parts of a plan's limits that GET /api/account shows.
type Limits struct {
	MaxCustomDomains    int64
	DatabaseConnections int64
	DatabaseBytes       int64
}

// Plan is identity's copy of the account's plan. Billing owns it and publishes each change
// with a growing Version; the store keeps only the highest it has seen.
type Plan struct {
	Name      string
	Limits    Limits
	Version   int64
	UpdatedAt time.Time
}

// FallbackPlan is what GET /api/account shows when neither billing's event nor billing's
// answer is at hand: every account starts on nestling, so these are its limits from the plan
// catalog (docs/conventions.md). Version 0 lets any real event replace it.
func FallbackPlan() Plan {
	return Plan{
		Name: "nestling",
		Limits: Limits{
			MaxCustomDomains:    0,
			DatabaseConnections: 5,
			DatabaseBytes:       268435456,
		},
	}
}
