package dbhelper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"tori.dev/services/zoneagent/internal/runas"
)

// stepTimeout bounds one step (making and mounting a filesystem, a checkpoint).
const stepTimeout = 2 * time.Minute

// Server answers the database host on a Unix socket. Two zones on one host run their hosts
// as the same user, so the uid alone does not tell them apart: the pid must be this agent's
// own child (Admit), or the connection is refused.
type Server struct {
	// UID is the database host's user.
	UID   uint32
	Steps *Steps
	Log   *slog.Logger

	pid atomic.Int64 // the admitted host's pid; 0: none yet
}

// Admit makes pid (the host just started) the one process whose requests are answered;
// 0 admits none.
func (s *Server) Admit(pid int) { s.pid.Store(int64(pid)) }

// Listen makes the helper's socket at path, its folder root's (made by the caller, 0711).
// Anyone may connect; the server answers only the admitted host (SO_PEERCRED).
func Listen(path string) (*net.UnixListener, error) {
	_ = os.Remove(path) // a socket left by an agent that was killed
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("dbhelper: listen: %w", err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("dbhelper: socket mode: %w", err)
	}
	return ln, nil
}

// Serve answers connections on ln until ctx ends, one request each.
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("dbhelper: accept: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			s.answer(ctx, conn)
		}()
	}
}

// answer checks the peer, reads its request and writes the step's reply.
func (s *Server) answer(ctx context.Context, conn *net.UnixConn) {
	cred, err := runas.PeerOf(conn)
	if err != nil {
		s.Log.WarnContext(ctx, "database helper: no peer credentials", "err", err.Error())
		return
	}
	if err := s.admits(cred); err != nil {
		s.Log.WarnContext(ctx, "database helper refused a connection", "uid", cred.UID, "pid", cred.PID, "err", err.Error())
		return
	}
	_ = conn.SetDeadline(time.Now().Add(stepTimeout + 10*time.Second))
	req, err := readRequest(conn)
	if err != nil {
		s.Log.WarnContext(ctx, "database helper refused an unreadable request", "pid", cred.PID, "err", err.Error())
		writeReply(conn, Reply{Error: ErrRefused.Error()})
		return
	}
	if err := s.Steps.Check(req); err != nil {
		s.Log.WarnContext(ctx, "database helper refused a request", "op", req.Op, "database", req.Name, "err", err.Error())
		writeReply(conn, Reply{Error: ErrRefused.Error()})
		return
	}
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	reply := s.Steps.Do(sctx, req)
	if reply.Error != "" && reply.Code == "" {
		s.Log.WarnContext(ctx, "database helper step failed", "op", req.Op, "database", req.Name, "err", reply.Error)
	}
	writeReply(conn, reply)
}

// admits is nil when cred is the admitted host's.
func (s *Server) admits(cred runas.Peer) error {
	pid := s.pid.Load()
	switch {
	case cred.UID != s.UID:
		return errors.New("not the database host's user")
	case pid == 0 || int64(cred.PID) != pid:
		return errors.New("not this agent's database host")
	}
	return nil
}

func writeReply(conn net.Conn, r Reply) { _ = json.NewEncoder(conn).Encode(r) }
