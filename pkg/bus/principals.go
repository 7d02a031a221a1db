package bus

import (
	"regexp"
	"strings"
)

// Every service and every zone has a broker user of its own, named "<prefix>tori.<principal>":
// "tori.identity", "tori.zone.eu-1", or in tests "test.tori.apps". The principal is what the
// bus trusts: a message's AMQP user_id (which the broker checks against the connection's user)
// names its publisher, and consumers and responders accept a routing key or a request only
// from the principal that owns it.

// The principals of the control plane's services.
const (
	PrincipalIdentity  = "identity"
	PrincipalBilling   = "billing"
	PrincipalApps      = "apps"
	PrincipalDeploys   = "deploys"
	PrincipalLogs      = "logs"
	PrincipalDatabases = "databases"
	PrincipalGateway   = "gateway"
)

// PrincipalOperator is the operator's broker user (busctl): it reads the dead-letter queue
// and, to replay a dead letter as its original publisher, has RabbitMQ's impersonator tag.
// It owns no routing key and answers no request.
const PrincipalOperator = "operator"

// Services are the principals every bootstrap makes a broker user for; each zone adds its own.
var Services = []string{PrincipalIdentity, PrincipalBilling, PrincipalApps, PrincipalDeploys, PrincipalLogs, PrincipalDatabases, PrincipalGateway}

const userMarker = "tori."

// ZonePrincipal is the principal of the zone agent of zone.
func ZonePrincipal(zone string) string { return "zone." + zone }

// UserName is the broker user of principal, with prefix ("" in production, "test." for the
// users `make test` makes).
func UserName(prefix, principal string) string { return prefix + userMarker + principal }

// PrincipalOf reads the principal from a broker user name; ok is false for a user that is no
// principal (guest, an operator).
func PrincipalOf(user string) (principal string, ok bool) {
	// Neither a service name nor a zone id has a dot, so the principal is what follows the
	// last "tori." or, for a zone, the last "tori.zone.".
	if i := strings.LastIndex(user, userMarker+"zone."); i >= 0 {
		principal = user[i+len(userMarker):]
	} else if i := strings.LastIndex(user, userMarker); i >= 0 {
		principal = user[i+len(userMarker):]
	}
	if principal == "" || principal == "zone." || strings.Contains(strings.TrimPrefix(principal, "zone."), ".") {
		return "", false
	}
	return principal, true
}

// ZoneOf is the zone id of a zone principal.
func ZoneOf(principal string) (string, bool) {
	z, ok := strings.CutPrefix(principal, "zone.")
	return z, ok && z != ""
}

// Permissions are one broker user's configure, write and read patterns (RabbitMQ regexes on
// exchange and queue names) on its virtual host.
type Permissions struct {
	Configure, Write, Read string
}

// ns accepts any BUS_NAMESPACE prefix: empty in production, one dot-terminated segment in
// tests ("t_some_test_1a2b.").
const ns = `^(?:[^.]*\.)?`

// ownQueues is the name every queue of principal starts with: its consumers' queues and the
// request queues it serves.
func ownQueues(principal string) string {
	if zone, ok := ZoneOf(principal); ok {
		return "zoneagent." + zone
	}
	return principal
}

// PermissionsOf are the permissions of principal: its own queues, the shared exchanges and
// the dead-letter queue it may bind and publish to, the server-named queues of listeners,
// direct replies and the default exchange its requests and replies travel through. The
// dead-letter queue is never readable: it holds everyone's messages.
func PermissionsOf(principal string) Permissions {
	if principal == PrincipalOperator {
		// The shared topology its Conn declares, the dead-letter queue to read, and the
		// default exchange to put dead letters back on their queues.
		shared := ns + `(?:tori\.events|tori\.dlx|tori\.dead-letter)$`
		return Permissions{
			Configure: shared,
			Write:     shared + `|^amq\.default$`,
			Read:      ns + `(?:tori\.dlx|tori\.dead-letter)$`,
		}
	}
	own := regexp.QuoteMeta(ownQueues(principal)) + `\..*`
	shared := `tori\.events|tori\.dlx|tori\.dead-letter`
	return Permissions{
		Configure: ns + `(?:` + shared + `|` + own + `)$|^amq\.gen-.*$`,
		Write:     ns + `(?:` + shared + `|` + own + `)$|^amq\.gen-.*$|^amq\.default$`,
		Read:      ns + `(?:tori\.events|tori\.dlx|` + own + `)$|^amq\.gen-.*$|^amq\.rabbitmq\.reply-to.*$`,
	}
}

// TopicWrite is the routing keys principal may publish on the events exchange (RabbitMQ's
// topic permissions): its own events, and for deploys the commands it sends to zones.
func TopicWrite(principal string) string {
	if principal == PrincipalOperator {
		return `^$`
	}
	if _, ok := ZoneOf(principal); ok {
		return `^zone\.` + zoneEvents + `\..*$`
	}
	if principal == PrincipalDeploys {
		return `^(?:deploys\..*|zone\.[^.]+\.(?:deploy|activate|discard|formation|cron_run|cron_cancel|preview_remove))$`
	}
	if principal == PrincipalDatabases {
		return `^(?:databases\..*|zone\.[^.]+\.(?:database_create|database_drop|database_dump|database_restore|database_rotate|database_retire))$`
	}
	return `^` + regexp.QuoteMeta(principal) + `\..*$`
}

// zoneEvents are the middle segments of the events zones publish (zone.deploy.progressed,
// zone.logs.batch, zone.app.napping, zone.database.ready, zone.cron.progressed); a zone id
// may not be one of them, so zone.<group>.# never matches a zone's commands.
const zoneEvents = `(?:deploy|logs|app|database|cron)`

// serviceEvents are the first segments of the services' events.
const serviceEvents = `(?:identity|billing|apps|deploys|logs|databases)`

// TopicRead is the binding keys principal may bind its queues with on the events exchange:
// every service's and zone's events, and for a zone its own commands. So no service, and no
// other zone, can bind a queue to a zone's commands and collect what deploys sends it; a
// binding key must start with its owner's literal segment ("#" or "*.x" is refused).
func TopicRead(principal string) string {
	events := serviceEvents + `\..*|zone\.` + zoneEvents + `\..*`
	if principal == PrincipalOperator {
		return `^$`
	}
	if zone, ok := ZoneOf(principal); ok {
		return `^(?:` + events + `|zone\.` + regexp.QuoteMeta(zone) + `\.[^.#*]+)$`
	}
	return `^(?:` + events + `)$`
}

// zoneCommands are the commands services send to a zone, as the last segment of
// zone.<zone>.<command>, each with the one principal that may send it: deploys its revisions,
// databases the managed databases.
var zoneCommands = map[string]string{
	"deploy": PrincipalDeploys, "activate": PrincipalDeploys, "discard": PrincipalDeploys,
	"formation": PrincipalDeploys, "cron_run": PrincipalDeploys, "cron_cancel": PrincipalDeploys, "preview_remove": PrincipalDeploys,
	"database_create": PrincipalDatabases, "database_drop": PrincipalDatabases, "database_dump": PrincipalDatabases,
	"database_restore": PrincipalDatabases, "database_rotate": PrincipalDatabases, "database_retire": PrincipalDatabases,
}

// MayPublish reports whether principal owns routing key: the first segment of the key names
// its owner (identity.*, billing.*, apps.*, deploys.*, logs.*, zone.*), except the commands
// zone.<zone>.<command>, which deploys or databases sends (zoneCommands).
func MayPublish(principal, key string) bool {
	parts := strings.Split(key, ".")
	if parts[0] == "zone" {
		if owner, ok := zoneCommands[parts[len(parts)-1]]; len(parts) == 3 && ok {
			return principal == owner
		}
		_, isZone := ZoneOf(principal)
		return isZone
	}
	return parts[0] == principal && principal != "" && principal != PrincipalOperator
}

// TagsOf are the broker user tags of principal: the operator impersonates, nobody else has
// any.
func TagsOf(principal string) []string {
	if principal == PrincipalOperator {
		return []string{"impersonator"}
	}
	return nil
}
