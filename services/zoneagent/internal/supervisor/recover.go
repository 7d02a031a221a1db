package supervisor

import (
	"context"
	"strings"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// RecoverContainers is the container half of ReapOrphans, run at agent start before the
// edge serves: containers outlive the agent, so it removes every tori-<deploy> and
// release-<deploy> container no live route names (release Jobs are redone under their name;
// prepared revisions start again on their first request once activated). A live image
// revision's container is of no use as it is (the agent knows neither its port nor its log
// stream), so it is replaced: at once, in the background, when minScale is above 0; on the
// first request, as after a nap, when it is 0 (its container is removed now).
func (l *Local) RecoverContainers(ctx context.Context, live []revision.Route) (removed int, err error) {
	if l.Image == nil || l.Image.Containers == nil {
		return 0, nil
	}
	removed, kept, err := l.Image.removeUnrouted(ctx, live)
	if err != nil {
		return removed, err
	}
	for _, r := range live {
		if !r.Kind.Image() || l.Revision == nil {
			continue
		}
		rev, err := l.Revision(ctx, r.DeployID)
		if err != nil {
			return removed, err
		}
		if rev.MinScale == 0 {
			// Only a container that is there: a runtime call per napping app would make the
			// start grow by a process per app.
			if name := serviceContainerName(r.DeployID); kept[name] {
				if err := l.Image.Containers.Remove(ctx, name); err != nil {
					return removed, err
				}
			}
			continue
		}
		go l.bringBack(ctx, edge.Route{AppID: r.AppID, Slug: r.Slug, DeployID: r.DeployID, Kind: r.Kind})
	}
	return removed, nil
}

// bringBack starts a live image revision that should always run under the agent.
func (l *Local) bringBack(ctx context.Context, route edge.Route) {
	if _, err := l.Wake(ctx, route); err != nil && ctx.Err() == nil {
		l.logger().WarnContext(ctx, "bring live image revision back", "deploy", route.DeployID, "err", err.Error())
	}
}

// removeUnrouted removes the zone's containers (services' and release Jobs') that no live
// route names, and returns how many and the names of those it kept.
func (i *ImageRuntime) removeUnrouted(ctx context.Context, live []revision.Route) (removed int, kept map[string]bool, err error) {
	names, err := i.Containers.List(ctx)
	if err != nil {
		return 0, nil, err
	}
	kept = map[string]bool{}
	liveIDs := map[string]bool{}
	for _, r := range live {
		if r.Kind.Image() {
			liveIDs[r.DeployID] = true
		}
	}
	for _, name := range names {
		id, service := strings.CutPrefix(name, "tori-")
		if service && liveIDs[id] {
			kept[name] = true
			continue
		}
		if !service && !strings.HasPrefix(name, "release-") {
			continue // not the zone's
		}
		if err := i.Containers.Remove(ctx, name); err != nil {
			return removed, kept, err
		}
		removed++
	}
	return removed, kept, nil
}
