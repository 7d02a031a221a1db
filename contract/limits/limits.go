// Package limits is the contract's limits and deadlines that more than one process holds to:
// the one that announces a limit (deploys, in its API and documents) and the one that
// enforces it (the zone's runtime) read the same value here.
package limits

import "time"

// ReleaseLimit bounds one release Job, the image's pull included (API "Deploy and release
// job": 10 minutes, not adjustable). The zone's runtime ends a Job that reaches it and keeps
// the previous revision serving.
const ReleaseLimit = 10 * time.Minute
