package runas

import (
	"errors"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Peer is who the kernel says is on the other end of a Unix connection (SO_PEERCRED, as it
// was at connect): the root runtime answers its children by their uid and pid alone.
type Peer struct {
	PID int32
	UID uint32
}

// PeerOf reads c's peer credentials.
func PeerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if credErr != nil {
		return Peer{}, credErr
	}
	return Peer{PID: cred.Pid, UID: cred.Uid}, nil
}

// ErrOrphan: the process's parent is not the agent that started it (it died before the
// parent-death signal took hold).
var ErrOrphan = errors.New("not started by the zone agent, or the agent is gone")

// DieWithParent asks for SIGKILL when the agent dies (setpriv's change of user clears what Go
// set at the fork), so a child never outlives its runtime; then, parent being the agent's pid
// (0: unknown, not checked), that the agent had not died already.
func DieWithParent(parent int) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return err
	}
	if parent != 0 && os.Getppid() != parent {
		return ErrOrphan
	}
	return nil
}
