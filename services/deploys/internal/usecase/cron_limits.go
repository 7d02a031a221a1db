package usecase

// cronLimits are the plan's cron limits: jobs per app, minimum minutes between firings and
// the longest timeout in seconds (nestling's where the copy predates them).
func cronLimits(p Plan) (jobs, minIntervalMinutes, timeoutSeconds int64) {
	p = p.WithProcessDefaults()
	return p.CronJobs, p.CronMinIntervalMinutes, p.CronTimeoutSeconds
}
