package deploy

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Formation errors. The HTTP layer maps them in its one place.
var (
	// ErrNotAService: a static app runs nothing, so it has no formation to scale.
	ErrNotAService = errors.New("deploy: the app is static and runs no processes")
	// ErrInstancesPerProcess, ErrInstancesTotal and ErrProcessTypes are the plan's formation
	// limits, wrapped by LimitError.
	ErrInstancesPerProcess = errors.New("deploy: more instances of a process type than the plan allows")
	ErrInstancesTotal      = errors.New("deploy: more instances in all than the plan allows")
	ErrProcessTypes        = errors.New("deploy: more running process types than the plan allows")
)

// UnknownProcessTypeError names a type a scale request gave that the live deploy does not
// declare.
type UnknownProcessTypeError struct{ Type string }

func (e *UnknownProcessTypeError) Error() string {
	return fmt.Sprintf("deploy: the live deploy declares no process type %q", e.Type)
}

// FormationEntry is one process type of an app's formation: the live deploy's command for
// it, how many instances should run and how many do (the zone's last report).
type FormationEntry struct {
	Type      string
	Command   string
	Quantity  int64
	Running   int64
	UpdatedAt time.Time
}

// NextFormation is the formation once a deploy declaring declared goes live: each declared
// type keeps its current quantity (a new one starts at 0, web at 1) and takes the new
// command; a type it no longer declares goes. Running counts are the old revision's, so they
// start again at 0. now stamps every entry whose command or quantity changed.
func NextFormation(current []FormationEntry, declared []Process, now time.Time) []FormationEntry {
	have := make(map[string]FormationEntry, len(current))
	for _, e := range current {
		have[e.Type] = e
	}
	out := make([]FormationEntry, 0, len(declared))
	for _, p := range declared {
		e, ok := have[p.Name]
		if !ok {
			e = FormationEntry{Type: p.Name, UpdatedAt: now}
			if p.Name == WebProcess {
				e.Quantity = 1
			}
		}
		if e.Command != p.Command {
			e.Command, e.UpdatedAt = p.Command, now
		}
		e.Running = 0
		out = append(out, e)
	}
	SortFormation(out)
	return out
}

// SortFormation orders entries web first, then by type, as the API lists them.
func SortFormation(es []FormationEntry) {
	sort.Slice(es, func(i, j int) bool { return processLess(es[i].Type, es[j].Type) })
}

// ScaleUpdate is one entry of a formation change: a type and its new quantity.
type ScaleUpdate struct {
	Type     string
	Quantity int64
}

// MaxScaleUpdates bounds one formation change.
const MaxScaleUpdates = 50

// FormationLimits are the plan's bounds on a formation.
type FormationLimits struct {
	Plan                string
	ProcessTypes        int64 // types with a quantity above 0
	InstancesPerProcess int64
	InstancesTotal      int64
}

// Scale applies updates to current as one change: either every entry applies or none does.
// It returns the new formation and whether any quantity grew (only growth is refused under a
// billing hold). Checks, in order: the request's shape (ParamError), types the live deploy
// does not declare (UnknownProcessTypeError), then the plan's limits (LimitError) when a
// quantity grows: a change that only lowers quantities always goes, even on a formation a
// smaller plan no longer allows.
func Scale(current []FormationEntry, updates []ScaleUpdate, limits FormationLimits, now time.Time) ([]FormationEntry, bool, error) {
	if len(updates) == 0 {
		return nil, false, &ParamError{Name: "updates", Reason: "must list at least one process type"}
	}
	if len(updates) > MaxScaleUpdates {
		return nil, false, &ParamError{Name: "updates", Reason: fmt.Sprintf("may list at most %d process types", MaxScaleUpdates)}
	}
	seen := make(map[string]bool, len(updates))
	for _, u := range updates {
		if seen[u.Type] {
			return nil, false, &ParamError{Name: "updates", Reason: fmt.Sprintf("names %q twice", u.Type)}
		}
		seen[u.Type] = true
		if u.Quantity < 0 {
			return nil, false, &ParamError{Name: "quantity", Reason: fmt.Sprintf("of %q must be an integer of 0 or more", u.Type)}
		}
	}
	index := make(map[string]int, len(current))
	next := make([]FormationEntry, len(current))
	copy(next, current)
	for i, e := range next {
		index[e.Type] = i
	}
	grew := false
	for _, u := range updates {
		i, ok := index[u.Type]
		if !ok {
			return nil, false, &UnknownProcessTypeError{Type: u.Type}
		}
		if u.Quantity == next[i].Quantity {
			continue
		}
		if u.Quantity > next[i].Quantity {
			grew = true
		}
		next[i].Quantity, next[i].UpdatedAt = u.Quantity, now
	}
	if grew {
		if err := checkLimits(next, limits); err != nil {
			return nil, false, err
		}
	}
	return next, grew, nil
}

func checkLimits(f []FormationEntry, l FormationLimits) error {
	var total, types int64
	for _, e := range f {
		if e.Quantity > l.InstancesPerProcess {
			return &LimitError{Err: ErrInstancesPerProcess, Limit: l.InstancesPerProcess, Plan: l.Plan}
		}
		total += e.Quantity
		if e.Quantity > 0 {
			types++
		}
	}
	if total > l.InstancesTotal {
		return &LimitError{Err: ErrInstancesTotal, Limit: l.InstancesTotal, Plan: l.Plan}
	}
	if types > l.ProcessTypes {
		return &LimitError{Err: ErrProcessTypes, Limit: l.ProcessTypes, Plan: l.Plan}
	}
	return nil
}
