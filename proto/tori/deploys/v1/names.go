// Package deploysbus names what the deploys service publishes on the bus. Each name is
// declared here once, beside its message in events.proto; consumers import the constant.
package deploysbus

// Events (routing keys on the events exchange).
const (
	KeyDeployCreated       = "deploys.deploy.created"        // deploysv1.DeployCreated
	KeyDeployStatusChanged = "deploys.deploy.status_changed" // deploysv1.DeployStatusChanged
	KeyDeployLive          = "deploys.deploy.live"           // deploysv1.DeployLive
	KeyAppCleaned          = "deploys.app.cleaned"           // appsv1.AppCleanupConfirmed
)

// Requests (queues deploys answers).
const (
	QueueHosting     = "deploys.rpc.hosting"      // deploysv1.HostingRequest → HostingReply
	QueueArtifactURL = "deploys.rpc.artifact_url" // deploysv1.ArtifactURLRequest → ArtifactURLReply
)
