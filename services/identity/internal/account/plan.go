package account

import "time"

// Limits are the parts of a plan's limits that GET /api/account shows.
type Limits struct {
	MaxCustomDomains    int64
	DatabaseConnections int64
	DatabaseBytes       int64
	Processes           ProcessLimits
	// Members is how many members and pending invitations a team may have; 0 in a copy kept
	// before plans had it (the team is then treated as nestling).
	Members int64
	// AuditRetentionDays is how far back the team's audit log reaches.
	AuditRetentionDays int64
}

// ProcessLimits are the plan's process, instance and cron limits (deploys enforces them).
type ProcessLimits struct {
	ProcessTypes           int64
	InstancesPerProcess    int64
	InstancesTotal         int64
	CronJobs               int64
	CronMinIntervalMinutes int64
	CronTimeoutSeconds     int64
	InstanceMemoryBytes    int64
}

// Plan is identity's copy of the account's plan. Billing owns it and publishes each change
// with a growing Version; the store keeps only the highest it has seen.
type Plan struct {
	Name      string
	Limits    Limits
	Version   int64
	UpdatedAt time.Time
}

// PredatesProcessLimits reports whether the copy was kept before plans had process limits:
// every plan allows at least one process type, so 0 means "not known", never a limit.
func (p Plan) PredatesProcessLimits() bool { return p.Limits.Processes.ProcessTypes == 0 }
