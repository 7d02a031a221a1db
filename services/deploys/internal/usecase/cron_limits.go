package usecase

// cronLimits are the plan's cron limits: jobs per app, minimum minutes between firings and
// the longest timeout in seconds.
func cronLimits(p Plan) (jobs, minIntervalMinutes, timeoutSeconds int64) {
	// TODO(merge): read p.CronJobs, p.CronMinIntervalMinutes and p.CronTimeoutSeconds once
	// the plan copy carries them (h38-deploys-formation); until then every plan gets
	// nestling's limits from DESIGN38.
	_ = p
	return 2, 60, 900
}
