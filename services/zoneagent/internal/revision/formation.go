package revision

import "fmt"

// Formation is how many instances of each process type an app's revision runs, and the
// generation it came with: the control plane counts every formation change of an app (an
// activation and each scaling) up, and an older one never replaces a newer.
type Formation struct {
	Quantities map[string]int64
	Generation int64
}

// Quantity is how many instances of ptype the formation runs. A formation with no
// quantities at all (a command from before formations) runs one web and nothing else.
func (f Formation) Quantity(ptype string) int64 {
	if len(f.Quantities) == 0 {
		if ptype == Web {
			return 1
		}
		return 0
	}
	return max(f.Quantities[ptype], 0)
}

// Newer reports whether f replaces cur: its generation is later.
func (f Formation) Newer(cur Formation) bool { return f.Generation > cur.Generation }

// InstanceName names the n-th instance of a process type (web.1, worker.2): the process
// its log lines carry and TORI_PROCESS.
func InstanceName(ptype string, n int) string { return fmt.Sprintf("%s.%d", ptype, n) }

// ProcessRunning is how many instances of a declared process type are up.
type ProcessRunning struct {
	Type    string
	Running int64
}
