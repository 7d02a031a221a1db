package names

import "regexp"

// DatabaseNamePattern is a managed database's name on its zone's cluster, and its owner
// role's: db_ and its id's 32 hex digits, a plain identifier that says nothing of the app or
// account. The databases service names a database so, apps writes the role into DATABASE_URL,
// and the zone lets no other name reach SQL or the pooler's files.
const DatabaseNamePattern = `^db_[0-9a-f]{32}$`

var databaseNameShape = regexp.MustCompile(DatabaseNamePattern)

// DatabaseName is the name of the database whose id is id, a UUID in its canonical form
// (lower-case, hyphenated); false for anything else.
func DatabaseName(id string) (string, bool) {
	if len(id) != 36 {
		return "", false
	}
	out := make([]byte, 0, 35)
	out = append(out, "db_"...)
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f':
			out = append(out, c)
		default:
			return "", false
		}
	}
	return string(out), true
}

// ValidDatabaseName reports whether name is a managed database's name.
func ValidDatabaseName(name string) bool { return databaseNameShape.MatchString(name) }
