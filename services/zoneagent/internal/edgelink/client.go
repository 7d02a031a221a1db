package edgelink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// Client is the edge's end of the link.
type Client struct {
	// Path is the runtime's socket (through a directory fd the edge was given:
	// /proc/self/fd/N/edge.sock).
	Path string
}

// Wake asks for the ids of the app's live web instances, waking them if they nap. ErrGone:
// the app is not live; ErrNoWeb: it runs no web process. An answer with no instance, more
// than MaxWakeInstances or an id past its bound is refused.
func (c Client) Wake(ctx context.Context, appID string) ([]string, error) {
	return c.wake(ctx, request{Kind: KindWake, App: appID})
}

// WakePreview is Wake for the app's preview previewID: its one web instance.
func (c Client) WakePreview(ctx context.Context, appID, previewID string) ([]string, error) {
	return c.wake(ctx, request{Kind: KindWake, App: appID, Preview: previewID})
}

func (c Client) wake(ctx context.Context, req request) ([]string, error) {
	a, _, err := c.ask(ctx, req, false)
	if err != nil {
		return nil, err
	}
	if len(a.Instances) == 0 || len(a.Instances) > MaxWakeInstances {
		return nil, fmt.Errorf("%w: a wake answered %d instances", ErrRefused, len(a.Instances))
	}
	for _, id := range a.Instances {
		if !validInstanceID(id) {
			return nil, fmt.Errorf("%w: an instance id of %d bytes", ErrRefused, len(id))
		}
	}
	return a.Instances, nil
}

// Dial asks for a TCP connection to the instance; ErrGone when it no longer runs.
func (c Client) Dial(ctx context.Context, instanceID string) (net.Conn, error) {
	_, conn, err := c.ask(ctx, request{Kind: KindDial, Instance: instanceID}, true)
	if err != nil {
		return nil, err
	}
	if conn == nil {
		return nil, fmt.Errorf("%w: no connection passed", ErrRefused)
	}
	return conn, nil
}

func (c Client) ask(ctx context.Context, req request, wantConn bool) (answer, net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", c.Path)
	if err != nil {
		return answer{}, nil, fmt.Errorf("edge link: %w", err)
	}
	uc := nc.(*net.UnixConn)
	defer uc.Close()
	// A visitor who leaves ends the wait (the runtime sees the closed end).
	stop := context.AfterFunc(ctx, func() { uc.SetDeadline(time.Now()) })
	defer stop()
	line, _ := json.Marshal(req)
	if _, err := uc.Write(append(line, '\n')); err != nil {
		return answer{}, nil, fmt.Errorf("edge link: %w", err)
	}
	// Only a wake's answer (its list of instances) may pass a request's bound.
	limit := maxLine
	if req.Kind == KindWake {
		limit = maxAnswerLine
	}
	buf := make([]byte, limit+1)
	oob := make([]byte, syscall.CmsgSpace(4))
	var got []byte
	var conn net.Conn
	for !bytes.Contains(got, []byte{'\n'}) {
		n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
		if oobn > 0 && conn == nil {
			conn, err = connFromRights(oob[:oobn])
			if err != nil {
				return answer{}, nil, err
			}
		}
		got = append(got, buf[:max(n, 0)]...)
		if len(got) > limit {
			closeConn(conn)
			return answer{}, nil, ErrLineTooLong
		}
		if err != nil {
			closeConn(conn)
			if ctx.Err() != nil {
				return answer{}, nil, ctx.Err()
			}
			return answer{}, nil, fmt.Errorf("edge link: %w", err)
		}
	}
	var a answer
	if err := decodeLine(got, &a); err != nil {
		closeConn(conn)
		return answer{}, nil, err
	}
	switch {
	case a.Gone:
		closeConn(conn)
		return a, nil, ErrGone
	case a.NoWeb:
		closeConn(conn)
		return a, nil, ErrNoWeb
	case a.Error != "":
		closeConn(conn)
		return a, nil, fmt.Errorf("%w: %s", ErrRefused, a.Error)
	}
	if !wantConn {
		closeConn(conn)
		conn = nil
	}
	return a, conn, nil
}

func closeConn(c net.Conn) {
	if c != nil {
		c.Close()
	}
}

// connFromRights turns the one passed fd into a net.Conn (it must be a connected socket).
func connFromRights(oob []byte) (net.Conn, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("%w: control message", ErrRefused)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, fmt.Errorf("%w: passed fds", ErrRefused)
	}
	f := os.NewFile(uintptr(fds[0]), "instance")
	defer f.Close()
	conn, err := net.FileConn(f)
	if err != nil {
		return nil, errors.Join(ErrRefused, err)
	}
	return conn, nil
}
