package edge

import (
	"maps"

	"tori.dev/services/zoneagent/internal/revision"
)

// Preview is one preview as the edge serves it: the revision at its host
// (names.PreviewHost), or a tombstone (Removed) whose host answers 410. Slug is the app's,
// so the edge can check a host's label against names.PreviewLabel.
type Preview struct {
	ID       string        `json:"id"`
	AppID    string        `json:"app_id"`
	Slug     string        `json:"slug,omitempty"`
	DeployID string        `json:"deploy_id,omitempty"`
	Kind     revision.Kind `json:"kind,omitempty"`
	Removed  bool          `json:"removed,omitempty"`
}

// Route is the preview's revision as a route the edge serves (its proxy keys on the
// preview, apart from the app's live revision).
func (p Preview) Route() Route {
	return Route{AppID: p.AppID, Slug: p.Slug, DeployID: p.DeployID, Kind: p.Kind, PreviewID: p.ID}
}

// previewsOf is the current previews by id; never nil.
func (t *Table) previewsOf() map[string]Preview {
	if m := t.previews.Load(); m != nil {
		return *m
	}
	return nil
}

// LookupPreview finds a preview (live or removed) by id.
func (t *Table) LookupPreview(id string) (Preview, bool) {
	p, ok := t.previewsOf()[id]
	return p, ok
}

// PreviewRoute is the live revision of an app's preview (the runtime wakes what its own
// table names, never what the edge names); false when removed or unknown.
func (t *Table) PreviewRoute(appID, previewID string) (Route, bool) {
	p, ok := t.LookupPreview(previewID)
	if !ok || p.Removed || p.AppID != appID || p.DeployID == "" {
		return Route{}, false
	}
	return p.Route(), true
}

// ReplacePreviews installs the previews (live ones and tombstones) whole. The same set
// again changes nothing and is not sent to a follower: the runtime reloads every pass.
func (t *Table) ReplacePreviews(list []Preview) {
	next := make(map[string]Preview, len(list))
	for _, p := range list {
		next[p.ID] = p
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur := t.previews.Load(); cur != nil && maps.Equal(*cur, next) {
		return
	}
	t.previews.Store(&next)
	t.tell(Change{Op: OpPreviews, Previews: list})
}

// SetPreview installs one preview (its new revision, or its tombstone).
func (t *Table) SetPreview(p Preview) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.setPreviewLocked(p)
	t.tell(Change{Op: OpPreview, Preview: &p})
}

func (t *Table) setPreviewLocked(p Preview) {
	cur := t.previewsOf()
	next := make(map[string]Preview, len(cur)+1)
	maps.Copy(next, cur)
	next[p.ID] = p
	t.previews.Store(&next)
}

// removeAppPreviews makes every preview of a deleted app a tombstone; the caller holds mu
// (RemoveApp, which its follower applies the same way).
func (t *Table) removeAppPreviews(appID string) {
	cur := t.previewsOf()
	var next map[string]Preview
	for id, p := range cur {
		if p.AppID == appID && !p.Removed {
			if next == nil {
				next = maps.Clone(cur)
			}
			next[id] = Preview{ID: p.ID, AppID: p.AppID, Slug: p.Slug, Removed: true}
		}
	}
	if next != nil {
		t.previews.Store(&next)
	}
}

// previewList is the previews as a list, for a follower's first view.
func (t *Table) previewList() []Preview {
	cur := t.previewsOf()
	out := make([]Preview, 0, len(cur))
	for _, p := range cur {
		out = append(out, p)
	}
	return out
}
