package env

import "slices"

// Change is several variables set and removed in one write, applied all together or not at
// all (PATCH /api/apps/{slug}/env).
type Change struct {
	Set   map[string]string
	Unset []string
}

// MaxChangeKeys bounds each side of one change: an app never holds more than MaxVarsPerApp,
// so a longer list can only be a mistake, and each value set costs a seal.
const MaxChangeKeys = MaxVarsPerApp

// Check applies the single write's rules to every key and value, and refuses a change that
// names nothing, names too many, or both sets and removes one key (which would leave its
// outcome to the order of the lists).
func (c Change) Check() error {
	if len(c.Set) == 0 && len(c.Unset) == 0 {
		return ErrInvalidChange
	}
	if len(c.Set) > MaxChangeKeys || len(c.Unset) > MaxChangeKeys {
		return ErrInvalidChange
	}
	for _, k := range c.SetKeys() {
		if !ValidKey(k) {
			return ErrInvalidKey
		}
		if err := CheckValue(c.Set[k]); err != nil {
			return err
		}
	}
	for _, k := range c.Unset {
		if !ValidKey(k) {
			return ErrInvalidKey
		}
		if _, both := c.Set[k]; both {
			return ErrInvalidChange
		}
	}
	return nil
}

// SetKeys is the names set, sorted, so a change is sealed and written in one order.
func (c Change) SetKeys() []string {
	keys := make([]string, 0, len(c.Set))
	for k := range c.Set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Keys is every name the change touches, set or removed, sorted and once each: what the
// audit log shows of it (names only, never values).
func (c Change) Keys() []string {
	keys := append(c.SetKeys(), c.Unset...)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Count is how many variables an app holding held will hold after the change: new names
// add one, removed names it holds take one away (a name it lacks is no change).
func (c Change) Count(held map[string]bool) (total int, added int) {
	total = len(held)
	for k := range c.Set {
		if !held[k] {
			total++
			added++
		}
	}
	for _, k := range slices.Compact(slices.Sorted(slices.Values(c.Unset))) {
		if held[k] {
			total--
		}
	}
	return total, added
}

// MayApply says whether a change that brings an app to total variables, adding added new
// names, is within the cap. A change that adds nothing is never refused, as replacing or
// deleting one variable never is.
func MayApply(total, added int) bool { return added == 0 || total <= MaxVarsPerApp }
