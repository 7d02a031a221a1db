package revision

import (
	"errors"
	"fmt"

	"tori.dev/contract/names"
)

// ErrInvalid is a command whose fields cannot be trusted: an id that is not a UUID (ids are
// joined into paths and queries), or a kind this zone does not run. Such a command is
// dead-lettered before it touches anything.
var ErrInvalid = errors.New("revision: invalid command")

// Check refuses a revision whose ids are not UUIDs or whose kind is unknown.
func (r Revision) Check() error {
	for name, id := range map[string]string{"deploy id": r.DeployID, "app id": r.AppID} {
		if !ValidID(id) {
			return fmt.Errorf("%w: %s is not a UUID", ErrInvalid, name)
		}
	}
	if r.EnvDeployID != "" && !ValidID(r.EnvDeployID) {
		return fmt.Errorf("%w: env deploy id is not a UUID", ErrInvalid)
	}
	if r.BuiltFromDeployID != "" && !ValidID(r.BuiltFromDeployID) {
		return fmt.Errorf("%w: built-from deploy id is not a UUID", ErrInvalid)
	}
	if r.PreviewID != "" && !names.ValidPreviewID(r.PreviewID) {
		return fmt.Errorf("%w: not a preview id", ErrInvalid)
	}
	switch r.Kind {
	case KindStatic, KindSource, KindImage:
	default:
		return fmt.Errorf("%w: unknown kind %q", ErrInvalid, r.Kind)
	}
	return nil
}

// ValidID reports whether id is a UUID in its canonical form (8-4-4-4-12 hex digits).
func ValidID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
