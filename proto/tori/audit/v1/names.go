// Package auditbus names the audit log's entries on the bus. Every service that makes changes
// publishes them under its own prefix (a principal may publish only its own keys); identity
// binds to each.
package auditbus

// Publishers lists the services whose entries identity records (identity writes its own
// entries straight into the log, in the change's transaction).
var Publishers = []string{"apps", "billing", "databases", "deploys", "logs"}

// Key is the routing key service publishes its audit entries under (auditv1.EntryRecorded).
func Key(service string) string { return service + ".audit.recorded" }

// Outcomes of an entry.
const (
	OutcomeSuccess = "success"
	OutcomeDenied  = "denied"
)

// Actor types of an entry.
const (
	ActorUser   = "user"
	ActorToken  = "token"
	ActorSystem = "system"
)
