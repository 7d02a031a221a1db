package revision

import "regexp"

// Process is one process type a revision declares: its name and its command line, run
// through the shell as a start command is.
type Process struct {
	Name, Command string
}

// Web is the process type that gets PORT, the edge's traffic and napping.
const Web = "web"

// processName is the rule for a process type's name.
var processName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,29}$`)

// ValidProcessName reports whether name may name a process type.
func ValidProcessName(name string) bool { return processName.MatchString(name) }
