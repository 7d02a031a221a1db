package env

import (
	"net"
	"net/url"
	"strconv"
)

// The variables the managed database writes (decisions.md, "Managed database"): the live
// database's, and a restore's.
const (
	DatabaseURLKey        = "DATABASE_URL"
	DatabaseRestoreURLKey = "DATABASE_RESTORE_URL"
)

// DatabaseCredentials are a managed database's connection parts, the pooler as an app's
// sandbox reaches it.
type DatabaseCredentials struct {
	User, Password, Database, Host string
	Port                           int
}

// Addr is the pooler's host:port.
func (c DatabaseCredentials) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// URL is postgres://<role>:<password>@<pooler host>:<port>/<database>?sslmode=disable: the
// pooler listens on the app's own loopback, so there is nothing for TLS to protect.
func (c DatabaseCredentials) URL() string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(c.User, c.Password), Host: c.Addr(), Path: "/" + c.Database, RawQuery: "sslmode=disable"}
	return u.String()
}

// RewriteDatabaseURL decides DATABASE_URL when the database is (again) ready: write is false
// when current (has: the variable is set) points at another host, which the customer chose
// and is never touched. Otherwise the fresh URL, keeping every query parameter the current
// one has (the customer's additions and edits win over ours).
func RewriteDatabaseURL(current string, has bool, c DatabaseCredentials) (value string, write bool) {
	fresh := c.URL()
	if !has {
		return fresh, true
	}
	cur, err := url.Parse(current)
	if err != nil || cur.Host != c.Addr() {
		return "", false
	}
	out, _ := url.Parse(fresh)
	q := out.Query()
	for k, vs := range cur.Query() {
		q[k] = vs
	}
	out.RawQuery = q.Encode()
	return out.String(), true
}

// RemovesDatabaseURL reports whether current is the URL of role (the database being
// deleted), which goes with it; any other value stays.
func RemovesDatabaseURL(current, role string) bool {
	u, err := url.Parse(current)
	return err == nil && u.User != nil && IsDatabaseLogin(u.User.Username(), role)
}

// IsDatabaseLogin reports whether user is one of the two logins of the database whose role
// is role: the role itself, or the one credential rotations take turns with (<role>_b; the
// zone's managed/logins.go).
func IsDatabaseLogin(user, role string) bool { return user == role || user == role+"_b" }
