package edgelink

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"tori.dev/contract/names"
	"tori.dev/services/zoneagent/internal/runas"
)

// Runtime is what the link asks of the zone's runtime (supervisor.Local through the
// agent's routing table).
type Runtime interface {
	// Wake returns the ids of the app's live web instances, starting them when they nap,
	// and marks the app used (napping counts from the last use). ErrGone: the app is not
	// live (paused, static, unknown); ErrNoWeb: its live revision runs no web instance.
	Wake(ctx context.Context, appID string) ([]string, error)
	// WakePreview is Wake for the app's preview previewID (its one web instance): ErrGone
	// when the preview is removed or unknown to the runtime's table.
	WakePreview(ctx context.Context, appID, previewID string) ([]string, error)
	// Dial connects to the instance from inside its network namespace (or to a container's
	// host port); ErrGone when the instance no longer runs.
	Dial(ctx context.Context, instanceID string) (net.Conn, error)
}

// Peer is the credentials the kernel gives for the other end of a link connection.
type Peer = runas.Peer

// Server is the runtime's end of the link.
type Server struct {
	Runtime Runtime
	// Allow says whether a connection's peer is this zone's own edge process: its user and
	// its pid (two zones on one host share the edge's user).
	Allow func(Peer) bool
	Log   *slog.Logger
	// WakeTimeout bounds one wake (a start waits for the health check); 0: 2 minutes.
	WakeTimeout time.Duration
}

// maxConns bounds the link connections served at once.
const maxConns = 512

// Serve answers connections on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	slots := make(chan struct{}, maxConns)
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			c.Close()
			return nil
		}
		go func() {
			defer func() { <-slots }()
			defer c.Close()
			s.serveConn(ctx, c)
		}()
	}
}

func (s *Server) serveConn(ctx context.Context, c *net.UnixConn) {
	peer, err := runas.PeerOf(c)
	if err != nil || s.Allow == nil || !s.Allow(peer) {
		s.Log.WarnContext(ctx, "edge link: refused a peer that is not this zone's edge", "pid", peer.PID, "uid", peer.UID)
		return
	}
	c.SetDeadline(time.Now().Add(ioDeadline))
	line, err := readLine(bufio.NewReaderSize(c, maxLine), maxLine)
	if errors.Is(err, io.EOF) {
		return // connected and asked nothing: the edge's check that the link is up
	}
	if err != nil {
		s.Log.WarnContext(ctx, "edge link: unreadable request", "err", err.Error())
		return
	}
	var req request
	if err := decodeLine(line, &req); err != nil {
		s.Log.WarnContext(ctx, "edge link: refused a malformed request", "err", err.Error())
		s.answer(c, answer{Error: "refused"}, nil)
		return
	}
	if req.Preview != "" && (req.Kind != KindWake || !names.ValidPreviewID(req.Preview)) {
		s.Log.WarnContext(ctx, "edge link: refused a request naming a preview it cannot", "kind", req.Kind)
		s.answer(c, answer{Error: "refused"}, nil)
		return
	}
	switch req.Kind {
	case KindWake:
		s.wake(ctx, c, req.App, req.Preview)
	case KindDial:
		s.dial(ctx, c, req.Instance)
	default:
		s.Log.WarnContext(ctx, "edge link: refused an unknown request", "kind", req.Kind)
		s.answer(c, answer{Error: "refused"}, nil)
	}
}

func (s *Server) wake(ctx context.Context, c *net.UnixConn, appID, previewID string) {
	timeout := s.WakeTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The edge gives up on a request it no longer waits for by closing its end.
	c.SetDeadline(time.Time{})
	var ids []string
	var err error
	if previewID != "" {
		ids, err = s.Runtime.WakePreview(wctx, appID, previewID)
	} else {
		ids, err = s.Runtime.Wake(wctx, appID)
	}
	c.SetDeadline(time.Now().Add(ioDeadline))
	switch {
	case errors.Is(err, ErrGone):
		s.answer(c, answer{Gone: true}, nil)
	case errors.Is(err, ErrNoWeb):
		s.answer(c, answer{NoWeb: true}, nil)
	case err != nil:
		s.Log.WarnContext(ctx, "wake service", "app", appID, "err", err.Error())
		s.answer(c, answer{Error: "wake failed"}, nil)
	default:
		s.answerWake(ctx, c, appID, ids)
	}
}

// answerWake sends a wake's instances, within the wire's bounds: an id past its length is
// left out (and logged), the list cut at MaxWakeInstances; none left is the no-web answer.
func (s *Server) answerWake(ctx context.Context, c *net.UnixConn, appID string, ids []string) {
	sent := make([]string, 0, min(len(ids), MaxWakeInstances))
	for _, id := range ids {
		if !validInstanceID(id) {
			s.Log.WarnContext(ctx, "edge link: an instance id the link cannot carry was left out", "app", appID, "bytes", len(id))
			continue
		}
		if len(sent) == MaxWakeInstances {
			s.Log.WarnContext(ctx, "edge link: a wake's instances were cut to the link's bound", "app", appID, "instances", len(ids), "sent", MaxWakeInstances)
			break
		}
		sent = append(sent, id)
	}
	if len(sent) == 0 {
		s.answer(c, answer{NoWeb: true}, nil)
		return
	}
	s.answer(c, answer{Instances: sent}, nil)
}

func (s *Server) dial(ctx context.Context, c *net.UnixConn, instanceID string) {
	dctx, cancel := context.WithTimeout(ctx, ioDeadline)
	defer cancel()
	conn, err := s.Runtime.Dial(dctx, instanceID)
	switch {
	case errors.Is(err, ErrGone):
		s.answer(c, answer{Gone: true}, nil)
		return
	case err != nil:
		s.answer(c, answer{Error: "dial failed: " + err.Error()}, nil)
		return
	}
	defer conn.Close()
	sc, ok := conn.(syscall.Conn)
	if !ok {
		s.answer(c, answer{Error: "not a socket"}, nil)
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		s.answer(c, answer{Error: "not a socket"}, nil)
		return
	}
	// The fd is sent while conn still holds it; the kernel gives the edge its own
	// reference, so closing ours after the write leaves the edge's open.
	raw.Control(func(fd uintptr) { s.answer(c, answer{Instance: instanceID}, []int{int(fd)}) })
}

func (s *Server) answer(c *net.UnixConn, a answer, fds []int) {
	line, _ := json.Marshal(a)
	line = append(line, '\n')
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	if _, _, err := c.WriteMsgUnix(line, oob, nil); err != nil {
		s.Log.Warn("edge link: answer not sent", "err", err.Error())
	}
}

// Listen makes the link's socket at path, in a directory only root and the edge's group
// may enter (0710), the socket itself 0660 for that group: no other local user reaches it,
// and the peer check refuses any process but the zone's own edge. The socket is made through
// the directory's descriptor, so a long DATA_DIR (a test's temporary folder) never meets the
// 108 bytes a socket's path may have.
func Listen(path string, edgeGID int) (*net.UnixListener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o710); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o710); err != nil {
		return nil, err
	}
	if err := os.Chown(dir, os.Getuid(), edgeGID); err != nil {
		return nil, fmt.Errorf("edge link directory: %w", err)
	}
	os.Remove(path) // a previous run's
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	short := fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(path))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: short, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// Its name is the descriptor's, closed below: the socket is removed by its own path.
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.Chown(path, os.Getuid(), edgeGID); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}
