package dbhelper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"tori.dev/services/zoneagent/internal/managed"
)

// clientTimeout bounds a request whose caller has no context (managed.CeilingSteps' Tend,
// DropCrashReserve, Release): the helper's own bound and a margin.
const clientTimeout = stepTimeout + 15*time.Second

// Client is the database host's side: managed.CeilingSteps and managed.AccessKeeper, each
// step one request to the root helper.
type Client struct {
	Socket string
}

// Do sends one request and returns the helper's reply; a refused or failed step is an error.
func (c Client) Do(ctx context.Context, req Request) (Reply, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.Socket)
	if err != nil {
		return Reply{}, fmt.Errorf("dbhelper: the database helper: %w", err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	} else {
		_ = conn.SetDeadline(time.Now().Add(clientTimeout))
	}
	// The helper closes without a word on a connection it does not admit.
	var reply Reply
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return Reply{}, fmt.Errorf("%w: %s: no answer (%v)", ErrRefused, req.Op, err)
	}
	if err := json.NewDecoder(conn).Decode(&reply); err != nil {
		return Reply{}, fmt.Errorf("%w: %s: no answer (%v)", ErrRefused, req.Op, err)
	}
	switch {
	case reply.Code == codeAccessUnmanaged:
		return reply, fmt.Errorf("%w: %s", managed.ErrAccessUnmanaged, reply.Error)
	case reply.Error == ErrRefused.Error():
		return reply, fmt.Errorf("%w: %s", ErrRefused, req.Op)
	case reply.Error != "":
		return reply, fmt.Errorf("dbhelper: %s: %s", req.Op, reply.Error)
	}
	return reply, nil
}

func (c Client) step(req Request) (Reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	return c.Do(ctx, req)
}

// Ping reports what the helper can do for this host: ceilings and the pooler's client caps.
func (c Client) Ping(ctx context.Context) (ceilings, clientCaps bool, err error) {
	r, err := c.Do(ctx, Request{Op: OpPing})
	return r.Ceilings, r.ClientCaps, err
}

// Ensure brings database name's filesystem, tablespace and crash reserve about.
func (c Client) Ensure(ctx context.Context, name string, capBytes int64, tablespaceOwner string) error {
	_, err := c.Do(ctx, Request{Op: OpEnsure, Name: name, Bytes: capBytes, Owner: tablespaceOwner})
	return err
}

// Tend gives back part of a full filesystem's reserve, or keeps it (managed.Ceilings.Tend).
func (c Client) Tend(name string, capBytes int64) (bool, error) {
	r, err := c.step(Request{Op: OpTend, Name: name, Bytes: capBytes})
	return r.Flag, err
}

// DropCrashReserve removes database name's crash reserve (before DROP TABLESPACE).
func (c Client) DropCrashReserve(name string) error {
	_, err := c.step(Request{Op: OpDropRes, Name: name})
	return err
}

// Release unmounts database name's filesystem and deletes its image.
func (c Client) Release(name string) error {
	_, err := c.step(Request{Op: OpRelease, Name: name})
	return err
}

// KeepAccess rebuilds the cluster's pg_hba.conf section.
func (c Client) KeepAccess(ctx context.Context) error {
	_, err := c.Do(ctx, Request{Op: OpAccess})
	return err
}

// Remount mounts again every database filesystem of caps (name: cap) whose image exists.
func (c Client) Remount(ctx context.Context, caps map[string]int64) error {
	var errs []error
	for name, capBytes := range caps {
		if _, err := c.Do(ctx, Request{Op: OpRemount, Name: name, Bytes: capBytes}); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// WatchAll keeps every database's crash reserve and asks for one checkpoint when any freed
// enough (managed.Ceilings.WatchAll); it reports how many asked.
func (c Client) WatchAll(ctx context.Context, caps map[string]int64) (int64, error) {
	var due int64
	var errs []error
	for name, capBytes := range caps {
		r, err := c.Do(ctx, Request{Op: OpWatch, Name: name, Bytes: capBytes})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		if r.Flag {
			due++
		}
	}
	if due > 0 {
		if _, err := c.Do(ctx, Request{Op: OpCheckpoint}); err != nil {
			errs = append(errs, err)
		}
	}
	return due, errors.Join(errs...)
}

// SyncClientCaps loads the pooler's per-uid caps, in full.
func (c Client) SyncClientCaps(ctx context.Context, caps map[uint32]int) error {
	list := make([]ClientCap, 0, len(caps))
	for uid, n := range caps {
		list = append(list, ClientCap{UID: uid, Max: n})
	}
	_, err := c.Do(ctx, Request{Op: OpClientCaps, Caps: list})
	return err
}
