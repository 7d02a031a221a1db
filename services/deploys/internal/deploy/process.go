package deploy

import (
	"fmt"
	"sort"

	"tori.dev/contract/names"
)

// Process is one process type a deploy declares: its name and the command line it runs
// through the shell, as `start` does.
type Process struct {
	Name    string
	Command string
}

// WebProcess is the one process type that gets PORT, the edge's traffic and napping.
const WebProcess = "web"

// Bounds on an image deploy's declared processes (issue 38).
const (
	MaxProcessTypes      = 20
	MaxProcessCommandLen = 4096
)

// ValidProcessName reports whether name may name a process type (the contract's rule: it
// becomes part of TORI_PROCESS and of log filters).
func ValidProcessName(name string) bool { return names.ProcessName(name) }

// ParseProcesses checks an image deploy's `processes` object (name → command) and returns it
// web first, then by name, the order the zone and the formation use. An empty or absent object
// gives nil: the deploy runs one web as before. startGiven says the body also gave `start`,
// which would be a second web command.
func ParseProcesses(in map[string]string, startGiven bool) ([]Process, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxProcessTypes {
		return nil, &ParamError{Name: "processes", Reason: fmt.Sprintf("declares more than %d process types", MaxProcessTypes)}
	}
	if _, ok := in[WebProcess]; ok && startGiven {
		return nil, &ParamError{Name: "processes.web", Reason: "and start both give the web command: keep one"}
	}
	out := make([]Process, 0, len(in))
	for name, cmd := range in {
		if !ValidProcessName(name) {
			return nil, &ParamError{Name: "processes", Reason: fmt.Sprintf("name %q must match %s", name, names.ProcessNamePattern)}
		}
		if len(cmd) == 0 || len(cmd) > MaxProcessCommandLen {
			return nil, &ParamError{Name: "processes." + name, Reason: fmt.Sprintf("must be a command of 1 to %d bytes", MaxProcessCommandLen)}
		}
		out = append(out, Process{Name: name, Command: cmd})
	}
	SortProcesses(out)
	return out, nil
}

// SortProcesses orders process types web first, then by name.
func SortProcesses(ps []Process) {
	sort.Slice(ps, func(i, j int) bool { return processLess(ps[i].Name, ps[j].Name) })
}

func processLess(a, b string) bool {
	if (a == WebProcess) != (b == WebProcess) {
		return a == WebProcess
	}
	return a < b
}
