package dbhelper

import (
	"context"
	"errors"
	"fmt"

	"tori.dev/services/zoneagent/internal/managed"
)

// Bounds of the arguments: a cap no plan comes near, an app's connections, how many apps.
const (
	MaxCapBytes      = 1 << 40
	MaxClientCap     = 1 << 16
	maxClientCapApps = 100_000
)

// Steps are the privileged steps as the zone agent's root process does them, for its zone
// alone: the folders, the provisioning role and the uid range come from the agent's
// configuration, never from a request.
type Steps struct {
	// Ceilings does the filesystem steps; nil when the host has no hard ceiling (not root,
	// no e2fsprogs).
	Ceilings *managed.Ceilings
	// Access rebuilds the cluster's pg_hba.conf section (managed.HBAKeeper); nil: not kept.
	Access managed.AccessKeeper
	// ClientCaps is the pooler's caps table, made already (Init); nil: none (no root, no nft).
	ClientCaps *managed.ClientCaps
	// TablespaceOwner is the provisioning role (ZONE_POSTGRES_ADMIN_URL's user): the only
	// owner a tablespace is made for.
	TablespaceOwner string
}

// errBadArguments: a request whose step or arguments the helper does not take.
var errBadArguments = errors.New("dbhelper: a step or argument the helper does not take")

// Check refuses a request that is not exactly one of the steps with valid arguments.
func (s *Steps) Check(req Request) error {
	named := managed.ValidName(req.Name)
	sized := req.Bytes > 0 && req.Bytes <= MaxCapBytes
	noOwner, noCaps := req.Owner == "", req.Caps == nil
	var ok bool
	switch req.Op {
	case OpPing, OpCheckpoint, OpAccess:
		ok = req.Name == "" && req.Bytes == 0 && noOwner && noCaps
	case OpEnsure:
		ok = named && sized && req.Owner == s.TablespaceOwner && s.TablespaceOwner != "" && noCaps
	case OpRemount, OpTend, OpWatch:
		ok = named && sized && noOwner && noCaps
	case OpDropRes, OpRelease:
		ok = named && req.Bytes == 0 && noOwner && noCaps
	case OpClientCaps:
		ok = req.Name == "" && req.Bytes == 0 && noOwner && s.capsValid(req.Caps)
	}
	if !ok {
		return fmt.Errorf("%w: %q", errBadArguments, req.Op)
	}
	return nil
}

// capsValid: each uid in the apps' range once, each cap within bounds.
func (s *Steps) capsValid(caps []ClientCap) bool {
	if s.ClientCaps == nil || len(caps) > maxClientCapApps {
		return false
	}
	seen := make(map[uint32]bool, len(caps))
	for _, c := range caps {
		if c.UID < s.ClientCaps.UIDLo || c.UID > s.ClientCaps.UIDHi || c.Max < 1 || c.Max > MaxClientCap || seen[c.UID] {
			return false
		}
		seen[c.UID] = true
	}
	return true
}

// Do runs a checked request's step.
func (s *Steps) Do(ctx context.Context, req Request) Reply {
	if err := s.Check(req); err != nil {
		return Reply{Error: err.Error()}
	}
	var flag bool
	var err error
	switch req.Op {
	case OpPing:
		return Reply{Ceilings: s.Ceilings != nil, ClientCaps: s.ClientCaps != nil}
	case OpAccess:
		if s.Access == nil {
			return Reply{Error: managed.ErrAccessUnmanaged.Error(), Code: codeAccessUnmanaged}
		}
		err = s.Access.KeepAccess(ctx)
		if errors.Is(err, managed.ErrAccessUnmanaged) {
			return Reply{Error: err.Error(), Code: codeAccessUnmanaged}
		}
	case OpClientCaps:
		want := make(map[uint32]int, len(req.Caps))
		for _, c := range req.Caps {
			want[c.UID] = c.Max
		}
		err = s.ClientCaps.Sync(want)
	default:
		flag, err = s.ceilingStep(ctx, req)
	}
	if err != nil {
		return Reply{Error: err.Error()}
	}
	return Reply{Flag: flag}
}

// ceilingStep runs one of the filesystem steps.
func (s *Steps) ceilingStep(ctx context.Context, req Request) (bool, error) {
	c := s.Ceilings
	if c == nil {
		return false, errors.New("dbhelper: this host has no database ceilings")
	}
	switch req.Op {
	case OpEnsure:
		return false, c.Ensure(ctx, req.Name, req.Bytes, s.TablespaceOwner)
	case OpRemount:
		return false, c.Remount(map[string]int64{req.Name: req.Bytes})
	case OpTend:
		return c.Tend(req.Name, req.Bytes)
	case OpWatch:
		return c.Watch(req.Name, req.Bytes)
	case OpCheckpoint:
		return false, c.Checkpoint(ctx)
	case OpDropRes:
		return false, c.DropCrashReserve(req.Name)
	case OpRelease:
		return false, c.Release(req.Name)
	}
	return false, errBadArguments
}
