package usecase

import (
	"context"

	"tori.dev/services/zoneagent/internal/revision"
)

// A promoted preview (StartRevision.built_from_deploy_id) may reuse what the zone prepared
// for the preview instead of fetching and preparing the artifact again: a static site's
// bundle here, a source's built tree in the runner. Only a revision of the same app and
// kind on record is reused; when it is gone (collected, never here), the revision is
// prepared from its artifact as any other.

// reuseBundle copies the bundle of r's built-from revision as r's; false when there is
// none to reuse (or the copy failed: the caller then publishes from the artifact).
func (a *Agent) reuseBundle(ctx context.Context, r revision.Revision) bool {
	if !a.reusable(ctx, r) {
		return false
	}
	if err := a.sites.CopyRevision(ctx, r.AppID, r.BuiltFromDeployID, r.DeployID); err != nil {
		a.log.InfoContext(ctx, "built-from bundle not reused; publishing from the artifact", "deploy", r.DeployID, "from", r.BuiltFromDeployID, "err", err.Error())
		return false
	}
	a.log.InfoContext(ctx, "reused a built-from bundle", "deploy", r.DeployID, "from", r.BuiltFromDeployID)
	return true
}

// reusable reports whether r names a built-from revision of the same app and kind that
// the zone prepared and has not collected.
func (a *Agent) reusable(ctx context.Context, r revision.Revision) bool {
	if r.BuiltFromDeployID == "" || r.BuiltFromDeployID == r.DeployID {
		return false
	}
	from, err := a.store.Revision(ctx, r.BuiltFromDeployID)
	if err != nil || from.AppID != r.AppID || from.Kind != r.Kind {
		return false
	}
	return from.State == revision.StateReady || from.State == revision.StateActive
}
