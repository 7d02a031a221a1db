package supervisor

import "strings"

// ShellCommand runs a manifest command line through /bin/sh -c.
func ShellCommand(line string) []string { return []string{"/bin/sh", "-c", line} }

// StartCommand is ShellCommand for a service's start line. A simple command is exec'd by
// the shell, so the service itself is the sandbox's command, without a shell in between.
func StartCommand(line string) []string {
	// Left to the shell as written: compound lines; a line that execs already (the Procfile
	// habit), which would become "exec exec …"; and one that starts with a variable
	// assignment (NODE_ENV=production node …), which exec would take for a command name.
	fields := strings.Fields(line)
	if strings.ContainsAny(line, ";&|()`\n") || len(fields) == 0 || fields[0] == "exec" || strings.Contains(fields[0], "=") {
		return ShellCommand(line)
	}
	return ShellCommand("exec " + line)
}
