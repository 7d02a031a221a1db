package pooler

import (
	"net/url"
	"strings"

	"github.com/google/uuid"
)

// newName is a fresh managed database's name (as internal/managed's tests make them).
func newName() string { return "db_" + strings.ReplaceAll(uuid.NewString(), "-", "") }

// dbURL is the URL that logs in to database name as its own role over TCP.
func dbURL(admin, name, password, database string) string {
	u, _ := url.Parse(admin)
	u.User = url.UserPassword(name, password)
	u.Path = "/" + database
	return u.String()
}
