package revision

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"tori.dev/contract/names"
)

// Process is one process type a revision declares: its name and its command line, run
// through the shell as a start command is.
type Process struct {
	Name, Command string
}

// Web is the process type that gets PORT, the edge's traffic and napping.
const Web = "web"

// ValidProcessName reports whether name may name a process type (the contract's rule).
func ValidProcessName(name string) bool { return names.ProcessName(name) }

// NameRule says what a process type's name may be, for the messages that refuse one.
const NameRule = "lowercase letters, digits and dashes, starting with a letter, at most 30 characters"

// ErrBadProcess is a declaration that cannot run: a name outside the rule, a name given
// twice, or an empty command.
var ErrBadProcess = errors.New("invalid process declaration")

// CheckProcesses refuses declarations with a bad or repeated name or an empty command; its
// error wraps ErrBadProcess and names the offending type.
func CheckProcesses(ps []Process) error {
	seen := map[string]bool{}
	for _, p := range ps {
		if !ValidProcessName(p.Name) {
			return fmt.Errorf("%w: %q is not a valid process name (%s)", ErrBadProcess, p.Name, NameRule)
		}
		if seen[p.Name] {
			return fmt.Errorf("%w: %s is declared twice", ErrBadProcess, p.Name)
		}
		seen[p.Name] = true
		if strings.TrimSpace(p.Command) == "" {
			return fmt.Errorf("%w: %s has no command", ErrBadProcess, p.Name)
		}
	}
	return nil
}

// SortProcesses puts ps in the order every report uses: web first, then by name.
func SortProcesses(ps []Process) {
	slices.SortFunc(ps, func(a, b Process) int {
		switch {
		case a.Name == b.Name:
			return 0
		case a.Name == Web:
			return -1
		case b.Name == Web:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// ProcessesOrWeb is what a revision runs: its declarations, web first, or, when it declares
// none, one web running start ("" for an image: the image's own command).
func ProcessesOrWeb(declared []Process, start string) []Process {
	if len(declared) == 0 {
		return []Process{{Name: Web, Command: start}}
	}
	out := slices.Clone(declared)
	SortProcesses(out)
	return out
}
