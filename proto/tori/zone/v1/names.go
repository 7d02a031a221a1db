// Package zonebus names what a zone publishes on the bus and the commands it takes. Each
// name is declared here once, beside its message in zone.proto; the deploys service (which
// sends the commands) and the consumers of zone events import the constant.
package zonebus

// Events (routing keys on the events exchange).
const (
	KeyDeployProgressed = "zone.deploy.progressed" // zonev1.DeployProgress
	KeyLogBatch         = "zone.logs.batch"        // logsv1.LogBatch
	KeyAppNapping       = "zone.app.napping"       // zonev1.AppScaleChanged
	KeyAppWoken         = "zone.app.woken"         // zonev1.AppScaleChanged
	// KeyCertificateChanged: a custom hostname's certificate changed state at an edge; the
	// apps service keeps it on the domain record.
	KeyCertificateChanged = "zone.app.certificate_changed" // zonev1.CertificateChanged
	// KeyFormationChanged: how many instances of each process type of an app run now.
	KeyFormationChanged = "zone.app.formation_changed" // zonev1.FormationStatus
	// KeyCronProgressed: a cron run started or ended at the zone.
	KeyCronProgressed = "zone.cron.progressed" // zonev1.CronRunProgress
	// KeyAppMetrics: per-minute request counts from an edge and instance use from a runtime.
	KeyAppMetrics = "zone.app.metrics" // zonev1.AppMetrics
)

// Commands a zone takes. Their routing keys name the zone, so only its agent receives them.
const (
	CommandDeploy        = "deploy"         // zonev1.StartRevision
	CommandActivate      = "activate"       // zonev1.ActivateRevision
	CommandDiscard       = "discard"        // zonev1.DiscardRevision
	CommandFormation     = "formation"      // zonev1.ScaleFormation
	CommandCronRun       = "cron_run"       // zonev1.StartCronRun
	CommandCronCancel    = "cron_cancel"    // zonev1.CancelCronRun
	CommandPreviewRemove = "preview_remove" // zonev1.RemovePreview
)

// CommandKey is the routing key of command to zone.
func CommandKey(zone, command string) string { return "zone." + zone + "." + command }
