package names

import "regexp"

// ProcessNamePattern is a process type's name (web, worker) and a cron job's: it becomes
// part of TORI_PROCESS (web.1), of an instance's cgroup and of log lines' process, so the
// deploys service, the zone, the CLI and the console check the same shape.
const ProcessNamePattern = `^[a-z][a-z0-9-]{0,29}$`

// ProcessFilterPattern is a log line's process, and a ?process= filter: a type (worker,
// cron), one instance (worker.2) or one cron run (cron.<job>.<run id>).
const ProcessFilterPattern = `^[a-z][a-z0-9-]{0,29}(\.[a-z0-9-]{1,80}){0,2}$`

var (
	processNameShape   = regexp.MustCompile(ProcessNamePattern)
	processFilterShape = regexp.MustCompile(ProcessFilterPattern)
)

// ProcessName reports whether name may name a process type or a cron job.
func ProcessName(name string) bool { return processNameShape.MatchString(name) }

// ProcessFilter reports whether p is a log line's process or a filter by one.
func ProcessFilter(p string) bool { return processFilterShape.MatchString(p) }
