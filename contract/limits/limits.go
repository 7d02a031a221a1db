// Package limits is the contract's limits and deadlines that more than one process holds to:
// the one that announces or asks within a limit (deploys' API, the command line, the
// console) and the one that enforces it (the zone's runtime, the logs service) read the same
// value here.
package limits

import "time"

// ReleaseLimit bounds one release Job, the image's pull included (API "Deploy and release
// job": 10 minutes, not adjustable). The zone's runtime ends a Job that reaches it and keeps
// the previous revision serving.
const ReleaseLimit = 10 * time.Minute

// A read of the logs (API "Limits", "Log span" and "Log limit"): the logs service refuses a
// window over LogSpan or a page outside LogPageMin to LogPageMax; the command line and the
// console ask within them.
const (
	LogSpan    = 24 * time.Hour
	LogPageMin = 1
	LogPageMax = 500
)
