package pooler

import (
	"fmt"
	"strings"
)

// The auth file alone says who a login is, not where it may go: PgBouncer would let any
// login of the file ask for any database of [databases], and log in to the cluster as that
// login, where a role it gained (GRANT db_other TO db_mine, from code it ran as itself)
// carries CONNECT on the other database. So PgBouncer also checks an HBA file
// (auth_type = hba) that names, for each database, the logins the record admits for it and
// nobody else; the admin console admits the agent's admin user alone. A login, database
// or address no line matches is refused by PgBouncer itself ("login rejected"), before it
// dials the cluster. A per-database user= in [databases] is not the answer: it would log
// every client in as that user.

// hbaMethod is how a matching line authenticates: SCRAM against the auth file's password,
// as auth_type scram-sha-256 did before.
const hbaMethod = "scram-sha-256"

// hbaAddresses are every IPv4 and IPv6 client (an IPv4 client of a listener on :: is
// ::ffff:a.b.c.d): the boundary is the database and the login, not where it comes from.
// PgBouncer 1.18 takes no "all" here.
var hbaAddresses = []string{"0.0.0.0/0", "::/0"}

// adminDatabase is PgBouncer's admin console.
const adminDatabase = "pgbouncer"

// hbaFile is PgBouncer's HBA file for the record: the admin console for adminUser, then per
// database (sorted by name) its current login and, until retired, the one a rotation moved
// from. p.mu is held.
func (p *Pooler) hbaFile(names []string) string {
	var b strings.Builder
	b.WriteString("# Written by the zone agent (internal/pooler); rewritten on every change.\n")
	b.WriteString("# One database, its own logins; no line matches anything else, which PgBouncer rejects.\n")
	hbaLines(&b, adminDatabase, []string{adminUser})
	for _, n := range names {
		hbaLines(&b, n, p.state.Databases[n].logins(n))
	}
	return b.String()
}

func hbaLines(b *strings.Builder, database string, logins []string) {
	quoted := make([]string, len(logins))
	for i, l := range logins {
		quoted[i] = hbaQuote(l)
	}
	for _, addr := range hbaAddresses {
		fmt.Fprintf(b, "host %s %s %s %s\n", hbaQuote(database), strings.Join(quoted, ","), addr, hbaMethod)
	}
}

// hbaQuote quotes a name so PgBouncer reads it as that name and never as a keyword (all,
// sameuser) or an @file. Names are ValidName's already; this is the second fence.
func hbaQuote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// logins are the logins the record admits for database name: the current one and, until
// retired, the one a rotation moved from.
func (d pooledDBFile) logins(name string) []string {
	out := []string{d.login(name)}
	if d.OldLogin != "" && d.OldLogin != d.login(name) {
		out = append(out, d.OldLogin)
	}
	return out
}
