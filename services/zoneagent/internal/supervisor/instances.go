package supervisor

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
)

// The edge process reaches services only through these two (internal/edgelink): it never
// enters a namespace itself. An instance is one running process of an app's revision; its id
// names the app, the revision and the port, so a restarted process (after a crash or a nap)
// on another port is another instance, and the edge's pooled connections to the old one are
// not mistaken for connections to it.

// Wake returns the ids of the app's live web instances for route (the edge balances across
// them), starting its process when it naps (minScale 0) or has not run since the agent
// restarted, and marks it used.
func (l *Local) Wake(ctx context.Context, route edge.Route) ([]string, error) {
	p, err := l.running(ctx, route)
	if err != nil {
		return nil, err
	}
	p.lastUsed.Store(time.Now().UnixNano())
	return []string{instanceID(p)}, nil
}

// Dial connects to a running instance: inside its app's network namespace for a sandboxed
// process, to 127.0.0.1:port on the host for a container. edgelink.ErrGone when the
// instance is not the app's live one any more.
func (l *Local) Dial(ctx context.Context, id string) (net.Conn, error) {
	appID, _, ok := strings.Cut(id, "/")
	if !ok {
		return nil, edgelink.ErrGone
	}
	p := l.procs.live(appID)
	if p == nil || !p.alive() || instanceID(p) != id {
		return nil, edgelink.ErrGone
	}
	p.lastUsed.Store(time.Now().UnixNano())
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port))
	if p.transport != nil {
		return p.transport.DialContext(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

func instanceID(p *proc) string {
	return fmt.Sprintf("%s/%s/%d", p.appID, p.deployID, p.port)
}
