package catalog

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// plans is the catalog as docs/conventions.md fixes it; every service that enforces a limit
// learns these numbers from billing's events, never from a copy of this table.
var plans = []Plan{
	{
		Name:   Nestling,
		Prices: Prices{MonthCents: 0, YearCents: 0},
		Limits: Limits{
			Apps:                   3,
			CustomDomains:          0,
			ConcurrentDeploys:      1,
			UploadBytes:            100 * mib,
			DatabaseBytes:          256 * mib,
			DatabaseConnections:    5,
			BuildMinutes:           10,
			MinScale:               0,
			CPU:                    0.25,
			LogRetentionDays:       1,
			ProcessTypes:           2,
			InstancesPerProcess:    1,
			InstancesTotal:         2,
			CronJobs:               2,
			CronMinIntervalMinutes: 60,
			CronTimeoutSeconds:     900,
			InstanceMemoryBytes:    256 * mib,
			Members:                3,
			AuditRetentionDays:     7,
		},
	},
	{
		Name:   Songbird,
		Prices: Prices{MonthCents: 9_00, YearCents: 90_00},
		Limits: Limits{
			Apps:                   10,
			CustomDomains:          5,
			ConcurrentDeploys:      2,
			UploadBytes:            500 * mib,
			DatabaseBytes:          1 * gib,
			DatabaseConnections:    20,
			BuildMinutes:           20,
			MinScale:               1,
			CPU:                    1,
			LogRetentionDays:       7,
			ProcessTypes:           4,
			InstancesPerProcess:    3,
			InstancesTotal:         8,
			CronJobs:               10,
			CronMinIntervalMinutes: 10,
			CronTimeoutSeconds:     3600,
			InstanceMemoryBytes:    512 * mib,
			Members:                10,
			AuditRetentionDays:     30,
		},
	},
	{
		Name:   Flock,
		Prices: Prices{MonthCents: 29_00, YearCents: 290_00},
		Limits: Limits{
			Apps:                   50,
			CustomDomains:          50,
			ConcurrentDeploys:      5,
			UploadBytes:            1 * gib,
			DatabaseBytes:          10 * gib,
			DatabaseConnections:    100,
			BuildMinutes:           45,
			MinScale:               1,
			CPU:                    2,
			LogRetentionDays:       30,
			ProcessTypes:           8,
			InstancesPerProcess:    10,
			InstancesTotal:         40,
			CronJobs:               50,
			CronMinIntervalMinutes: 1,
			CronTimeoutSeconds:     14400,
			InstanceMemoryBytes:    1 * gib,
			Members:                50,
			AuditRetentionDays:     365,
		},
	},
}
