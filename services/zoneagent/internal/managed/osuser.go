package managed

import (
	"fmt"
	"os/user"
	"strconv"
)

// LookupUser is the uid and gid of the OS user name (the pooler's, the cluster's): files
// made for them are handed over by number.
func LookupUser(name string) (uint32, uint32, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("managed: pooler user %s: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("managed: pooler user %s has no numeric ids", name)
	}
	return uint32(uid), uint32(gid), nil
}
