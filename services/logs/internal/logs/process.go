package logs

import (
	"strings"

	"tori.dev/contract/names"
)

// ValidProcess reports whether p is a well-formed process name as zones write it (web.1,
// worker.2, cron.<job>.<run id>) or a type alone, as a filter may name it.
func ValidProcess(p string) bool { return names.ProcessFilter(p) }

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
