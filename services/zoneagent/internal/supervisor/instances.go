package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
)

// The edge process reaches services only through these two (internal/edgelink): it never
// enters a namespace itself. An instance is one running web process of an app's revision;
// its id names the app, the revision and the port, so a restarted process (after a crash or
// a nap) on another port is another instance, and the edge's pooled connections to the old
// one are not mistaken for connections to it.

// Wake returns the ids of the app's running web instances for route, starting them when
// the app naps (minScale 0) or has not run since the agent restarted, and marks them used.
// edgelink.ErrNoWeb when the revision declares no web or its formation runs none.
func (l *Local) Wake(ctx context.Context, route edge.Route) ([]string, error) {
	ps, err := l.liveWeb(ctx, route)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, errors.New("the app's web instance exited as it started")
	}
	now := time.Now().UnixNano()
	ids := make([]string, 0, len(ps))
	for _, p := range ps {
		p.lastUsed.Store(now)
		ids = append(ids, instanceID(p))
	}
	return ids, nil
}

// Dial connects to a running web instance: inside its app's network namespace for a
// sandboxed process, to 127.0.0.1:port on the host for a container. edgelink.ErrGone when
// the instance is not one of the app's live ones any more.
func (l *Local) Dial(ctx context.Context, id string) (net.Conn, error) {
	appID, rest, ok := strings.Cut(id, "/")
	if !ok {
		return nil, edgelink.ErrGone
	}
	deployID, _, _ := strings.Cut(rest, "/")
	var p *proc
	for _, w := range l.procs.liveWeb(appID, deployID) {
		if instanceID(w) == id {
			p = w
		}
	}
	if p == nil {
		p = l.previews.find(id) // previews.go
	}
	if p == nil {
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
