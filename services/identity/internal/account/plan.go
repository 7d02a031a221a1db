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
