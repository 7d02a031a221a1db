// Package appsbus names what the apps service publishes and answers on the bus. Each name is
// declared here once, beside its message in events.proto and apps.proto; consumers and
// requesters import the constant.
package appsbus

// Events (routing keys on the events exchange).
const (
	KeyAppCreated      = "apps.app.created"      // appsv1.AppCreated
	KeyAppDeleted      = "apps.app.deleted"      // appsv1.AppDeleted
	KeyDomainActivated = "apps.domain.activated" // appsv1.DomainActivated
	KeyDomainRemoved   = "apps.domain.removed"   // appsv1.DomainRemoved
	// KeyDomainDeactivated: an active hostname went back to pending; zones stop serving it.
	KeyDomainDeactivated = "apps.domain.deactivated" // appsv1.DomainDeactivated
	// KeyDomainVerificationFailing: an active hostname's TXT record went missing; identity
	// mails the account's owner.
	KeyDomainVerificationFailing = "apps.domain.verification_failing" // appsv1.DomainVerificationFailing
	// KeyDomainCertificateFailed: a custom hostname's certificate order failed (once per
	// failure, not per retry); identity mails the account's owner.
	KeyDomainCertificateFailed = "apps.domain.certificate_failed" // appsv1.DomainCertificateFailed
)

// Requests (queues apps answers).
const (
	QueueEnvSnapshot = "apps.rpc.env_snapshot" // appsv1.EnvSnapshotRequest → EnvSnapshotReply
	QueueEnvOpen     = "apps.rpc.env_open"     // appsv1.EnvOpenRequest → EnvOpenReply
	QueueEnvSame     = "apps.rpc.env_same"     // appsv1.EnvSameRequest → EnvSameReply
	QueueAppLookup   = "apps.rpc.app"          // appsv1.AppLookupRequest → AppLookupReply
)
