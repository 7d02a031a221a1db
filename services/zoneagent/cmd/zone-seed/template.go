package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"tori.dev/services/zoneagent/internal/revision"
)

// template is the prepared service revision each service app is a copy of.
type template struct {
	rev       revision.Revision
	formation revision.Formation
	tree      string // its built tree in the zone's apps folder
}

func (s *seeder) loadTemplate(ctx context.Context, ref TemplateRef) (template, error) {
	if ref.AppID == "" || ref.DeployID == "" {
		return template{}, ErrNoTemplate
	}
	rev, err := s.store.Revision(ctx, ref.DeployID)
	if err != nil {
		return template{}, fmt.Errorf("template %s: %w", ref.DeployID, err)
	}
	if rev.Kind != revision.KindSource || rev.State != revision.StateActive || rev.AppID != ref.AppID {
		return template{}, fmt.Errorf("%w: %s is a %s revision of %s, %s", ErrNoTemplate, ref.DeployID, rev.Kind, rev.AppID, rev.State)
	}
	f, err := s.store.Formation(ctx, ref.DeployID)
	if err != nil {
		return template{}, fmt.Errorf("template's formation: %w", err)
	}
	if s.cfg.AppsDir == "" {
		return template{}, fmt.Errorf("ZONE_APPS_DIR is unset: the template's tree cannot be found")
	}
	// Identities.Tree: <apps>/<app>/<deploy>, on the template app's mounted disk.
	tree := filepath.Join(s.cfg.AppsDir, ref.AppID, ref.DeployID)
	if _, err := os.Stat(tree); err != nil {
		return template{}, fmt.Errorf("template's tree: %w", err)
	}
	return template{rev: rev, formation: f, tree: tree}, nil
}

// clone is the template's record for app a: the same process types, limits and minScale.
// The environment snapshot is not copied (it is sealed to the template's deploy): a seeded
// service starts with no variables, and its wake opens none.
func (t template) clone(a App) revision.Revision {
	r := t.rev
	r.DeployID, r.AppID, r.Slug = a.DeployID, a.ID, a.Slug
	r.ArtifactKey = "artifacts/" + a.ID + "/" + a.DeployID
	r.EnvSealed, r.EnvKeyID, r.EnvDeployID = nil, "", ""
	r.State, r.ActivateWanted, r.DiscardWanted, r.Deadline = revision.StatePending, true, false, nil
	r.ClearCache, r.PreviewID, r.BuiltFromDeployID = false, "", ""
	return r
}
