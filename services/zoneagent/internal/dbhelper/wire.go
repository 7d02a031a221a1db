// Package dbhelper is the database host's root helper: the few privileged steps of managed
// databases (a database's filesystem mounted and released, its tablespace made as the
// cluster's superuser, the reserves in files of root's and of the cluster's user, a
// checkpoint, the cluster's pg_hba.conf section, the pooler's connection caps in nftables),
// done by the zone agent's root process for its database host, which runs as a user of its
// own (cmd/zoneagent/dbhost.go). One request per connection on a Unix socket, from the
// database host's uid and pid alone (SO_PEERCRED); each request names one step and only
// that step's arguments, every one checked (steps.go). The wire carries no path: each path
// is made from a checked database name under the zone's configured folders.
package dbhelper

import (
	"encoding/json"
	"errors"
	"io"
)

// The steps: the whole of what the helper does.
const (
	OpPing       = "ping"         // what the host may ask for (Reply.Ceilings, Reply.ClientCaps)
	OpEnsure     = "ensure"       // Name, Bytes (its cap), Owner: filesystem, tablespace, crash reserve
	OpRemount    = "remount"      // Name, Bytes: mount an existing image again (the host's start)
	OpTend       = "tend"         // Name, Bytes: give back or keep the reserve (Reply.Flag: full)
	OpWatch      = "watch"        // Name, Bytes: keep the crash reserve (Reply.Flag: checkpoint due)
	OpCheckpoint = "checkpoint"   // no argument
	OpDropRes    = "drop-reserve" // Name: before DROP TABLESPACE
	OpRelease    = "release"      // Name: unmount and delete the image
	OpAccess     = "access"       // no argument: rebuild the pg_hba.conf section
	OpClientCaps = "client-caps"  // Caps: the pooler's per-uid connection caps, in full
)

// maxRequestBytes bounds a request (a client-caps request names every app with a database).
const maxRequestBytes = 1 << 20

// Request is one step. Fields a step does not take must be zero.
type Request struct {
	Op    string      `json:"op"`
	Name  string      `json:"name,omitempty"`
	Bytes int64       `json:"bytes,omitempty"`
	Owner string      `json:"owner,omitempty"`
	Caps  []ClientCap `json:"caps,omitempty"`
}

// ClientCap is one app's cap on connections to the pooler, by the app's uid.
type ClientCap struct {
	UID uint32 `json:"uid"`
	Max int    `json:"max"`
}

// Reply is the step's outcome. Code names an error the host acts on.
type Reply struct {
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
	Flag  bool   `json:"flag,omitempty"`
	// Ceilings and ClientCaps (to ping): whether this host can have them (root, e2fsprogs, nft).
	Ceilings   bool `json:"ceilings,omitempty"`
	ClientCaps bool `json:"clientCaps,omitempty"`
}

// codeAccessUnmanaged: the cluster's pg_hba.conf is not the zone's (managed.ErrAccessUnmanaged).
const codeAccessUnmanaged = "access_unmanaged"

// ErrRefused: the helper refused the request (not the host, or a step or argument it does
// not take); the reason is in the helper's log, not on the wire.
var ErrRefused = errors.New("dbhelper: refused")

// readRequest decodes one request, refusing unknown fields and anything past the bound.
func readRequest(r io.Reader) (Request, error) {
	var req Request
	dec := json.NewDecoder(io.LimitReader(r, maxRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return Request{}, err
	}
	return req, nil
}
