// Package drains sends an app's log lines to its owner's collector (issue #40): the drain's
// rules (which URLs, which addresses), the wire formats (signed NDJSON over HTTPS, RFC 5424
// syslog over TLS with octet counting), and the sender that keeps each drain's backlog moving
// (one per drain across replicas, at least once, in order, with backoff). docs/drains.md is
// the customer's side of it.
package drains
