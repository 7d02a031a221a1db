// Package logsbus names what the logs service publishes on the bus. Each name is declared
// here once; consumers import the constant.
package logsbus

// Events (routing keys on the events exchange).
const (
	KeyAppCleaned = "logs.app.cleaned" // appsv1.AppCleanupConfirmed
)
