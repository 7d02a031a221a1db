package logs

import (
	"regexp"
	"strings"
)

// processPattern is a process's name as zones write it (web.1, worker.2, cron.<job>.<run id>)
// and as a filter may name it: a type, optionally followed by up to two dotted parts.
var processPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,29}(\.[a-z0-9-]{1,80}){0,2}$`)

// ValidProcess reports whether p is a well-formed process name (or a type alone).
func ValidProcess(p string) bool { return processPattern.MatchString(p) }

// ProcessType is the type part of a process name: worker of worker.2, cron of cron.nightly.7.
// The store indexes entries by it, so a type filter reads only that type's entries.
func ProcessType(p string) string {
	t, _, _ := strings.Cut(p, ".")
	return t
}

// ProcessFilter selects entries by the process that wrote them. The zero value selects every
// entry, lines of no process included.
type ProcessFilter struct {
	// Type selects entries of every instance of a type (worker: worker.1, worker.2, ...).
	Type string
	// Exact, when set, selects only the entries of that one process; Type is then its type.
	Exact string
}

// Any reports whether the filter selects every entry.
func (f ProcessFilter) Any() bool { return f.Type == "" }

// Matches reports whether an entry of process p passes the filter (the store's rule, for
// callers that hold entries already).
func (f ProcessFilter) Matches(p string) bool {
	switch {
	case f.Any():
		return true
	case f.Exact != "":
		return p == f.Exact
	default:
		return p != "" && ProcessType(p) == f.Type
	}
}

// parseProcessFilter reads the process parameter: a value with a dot names one process
// exactly (worker.2, cron.nightly.<run id>), a value without one a type (worker, cron).
func parseProcessFilter(s string) (ProcessFilter, error) {
	if s == "" {
		return ProcessFilter{}, nil
	}
	if !ValidProcess(s) {
		return ProcessFilter{}, invalid("process", "must be a process type such as worker or one process such as worker.2 or cron.nightly.<run id>")
	}
	f := ProcessFilter{Type: ProcessType(s)}
	if f.Type != s {
		f.Exact = s
	}
	return f, nil
}
