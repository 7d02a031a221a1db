package buildplan

import (
	"fmt"
	"strings"

	"tori.dev/services/zoneagent/internal/revision"
)

// releaseLine is the Procfile entry that names the release Job instead of a process type,
// as on Heroku.
const releaseLine = "release"

// procfile is what a Procfile declares: its process types in file order (web among them when
// it has a web: line) and its release: command.
type procfile struct {
	processes []revision.Process
	release   string
}

func (p procfile) web() (string, bool) {
	for _, x := range p.processes {
		if x.Name == revision.Web {
			return x.Command, true
		}
	}
	return "", false
}

// parseProcfile reads the Procfile, if there is one: `name: command` lines; blank lines and
// lines starting with # are ignored. A line of another shape, a name outside the rule, a
// name given twice or an empty command is an error naming the line.
func parseProcfile(files Files) (procfile, error) {
	var out procfile
	b, ok := files[ProcfileFile]
	if !ok {
		return out, nil
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, cmd, found := strings.Cut(line, ":")
		if !found {
			return out, fmt.Errorf("%s line %d: want \"name: command\"", ProcfileFile, i+1)
		}
		name, cmd = strings.TrimSpace(name), strings.TrimSpace(cmd)
		if !revision.ValidProcessName(name) {
			return out, fmt.Errorf("%s line %d: %q is not a valid process name (%s)", ProcfileFile, i+1, name, revision.NameRule)
		}
		if cmd == "" {
			return out, fmt.Errorf("%s: the %s: line has no command", ProcfileFile, name)
		}
		if seen[name] {
			return out, fmt.Errorf("%s line %d: %s is declared twice", ProcfileFile, i+1, name)
		}
		seen[name] = true
		if name == releaseLine {
			out.release = cmd
			continue
		}
		out.processes = append(out.processes, revision.Process{Name: name, Command: cmd})
	}
	return out, nil
}
