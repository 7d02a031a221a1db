package usecase

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"tori.dev/pkg/accessgate"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
)

// Formation is the caller's app's formation, web first then by type: empty for a static app
// (nothing runs) and for a service never deployed.
func (s *Service) Formation(ctx context.Context, accountID, slug string) ([]deploy.FormationEntry, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	if app.Kind != "service" {
		return []deploy.FormationEntry{}, nil
	}
	f, err := s.store.Formation(ctx, app.ID)
	if f == nil && err == nil {
		f = []deploy.FormationEntry{}
	}
	return f, err
}

// Scale changes quantities of the app's formation as one change (deploy.Scale's rules and
// the plan's limits), and tells the zone in the same transaction. It makes no revision. Under
// a billing hold that refuses deploys a change that grows any quantity is refused; lowering
// always works.
func (s *Service) Scale(ctx context.Context, accountID, slug string, updates []deploy.ScaleUpdate) ([]deploy.FormationEntry, error) {
	app, err := s.appFor(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	if app.Kind != "service" {
		return nil, deploy.ErrNotAService
	}
	plan, err := s.planFor(ctx, accountID)
	if err != nil {
		return nil, err
	}
	limits := deploy.FormationLimits{Plan: plan.Name, ProcessTypes: plan.ProcessTypes,
		InstancesPerProcess: plan.InstancesPerProcess, InstancesTotal: plan.InstancesTotal}
	auditScale(ctx, updates)
	var out []deploy.FormationEntry
	err = s.store.InTx(ctx, func(tx Tx) error {
		st, cur, err := tx.LockFormation(ctx, app.ID)
		if err != nil {
			return err
		}
		next, grew, err := deploy.Scale(cur, updates, limits, s.clock())
		if err != nil {
			return err
		}
		if grew {
			if err := s.holdCheck(ctx, accountID); err != nil {
				return err
			}
		}
		st.Generation++
		if err := tx.SaveFormation(ctx, app.ID, st, next); err != nil {
			return err
		}
		out = next
		return s.publishScale(ctx, tx, app, st, next)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// auditScale tells the request's audit entry the types and quantities asked for (the
// formation holds no secret: commands are not named).
func auditScale(ctx context.Context, updates []deploy.ScaleUpdate) {
	types := make([]string, 0, len(updates))
	quantities := make([]string, 0, len(updates))
	for _, u := range updates {
		types = append(types, u.Type)
		quantities = append(quantities, u.Type+"="+strconv.FormatInt(u.Quantity, 10))
	}
	accessgate.Annotate(ctx, "types", strings.Join(types, ","))
	accessgate.Annotate(ctx, "quantities", strings.Join(quantities, ","))
}

// activationFormation is the formation a deploy about to be activated runs: its declared
// types, with the quantities the app's formation has now (deploy.NextFormation). It is saved,
// following the deploy, at the next generation, in the activation's transaction.
func (s *Service) activationFormation(ctx context.Context, tx Tx, app App, d *deploy.Deploy) (FormationState, []deploy.FormationEntry, error) {
	declared, err := tx.Declarations(ctx, d.ID)
	if err != nil {
		return FormationState{}, nil, err
	}
	if len(declared) == 0 {
		// A zone that reported no declarations runs one web, as before formations.
		web := deploy.Process{Name: deploy.WebProcess}
		if d.Build != nil {
			web.Command = d.Build.Start
		}
		declared = []deploy.Process{web}
	}
	st, cur, err := tx.LockFormation(ctx, app.ID)
	if err != nil {
		return FormationState{}, nil, err
	}
	next := deploy.NextFormation(cur, declared, s.clock())
	if st.DeployID != "" && st.DeployID != d.ID {
		// Unlocked: a deploy's creation time and id never change.
		following, err := s.store.Deploy(ctx, st.DeployID)
		if err != nil && !errors.Is(err, deploy.ErrNotFound) {
			return FormationState{}, nil, err
		}
		if err == nil && following.NewerThan(d) {
			// Ready after a newer deploy was told to activate: the zone ignores this older
			// revision, so the formation keeps following the newer one.
			return st, next, nil
		}
	}
	st = FormationState{DeployID: d.ID, Generation: st.Generation + 1}
	if err := tx.SaveFormation(ctx, app.ID, st, next); err != nil {
		return FormationState{}, nil, err
	}
	return st, next, nil
}

// saveDeclarations records the process types the zone reported for a ready revision,
// dropping (and logging) any that a zone should never have sent.
func (s *Service) saveDeclarations(ctx context.Context, tx Tx, d *deploy.Deploy, reported []*zonev1.ProcessType) error {
	if d.Kind == deploy.KindStatic || len(reported) == 0 {
		return nil
	}
	ps := make([]deploy.Process, 0, len(reported))
	seen := map[string]bool{}
	for _, p := range reported {
		if !deploy.ValidProcessName(p.GetName()) || seen[p.GetName()] {
			s.log.WarnContext(ctx, "zone reported a process type that cannot be", "deploy", d.ID)
			continue
		}
		seen[p.GetName()] = true
		ps = append(ps, deploy.Process{Name: p.GetName(), Command: p.GetCommand()})
	}
	if len(ps) == 0 {
		return nil
	}
	return tx.SaveDeclarations(ctx, d.ID, ps)
}

// resendFormation tells the zone the formation again once the deploy it follows is live: a
// scale request made between the activation and the zone serving the revision was ignored
// there (it named a revision not yet served), and this carries it. An unchanged formation at
// the activation's generation changes nothing at the zone.
func (s *Service) resendFormation(ctx context.Context, tx Tx, app App, d *deploy.Deploy) error {
	if app.Kind != "service" {
		return nil
	}
	st, f, err := tx.LockFormation(ctx, app.ID)
	if err != nil || st.DeployID != d.ID {
		return err
	}
	return s.publishScale(ctx, tx, app, st, f)
}

// OnFormationStatus records how many instances of each type run, from the app's zone's
// report, in the consumer's transaction. A report about another deploy than the one the
// formation follows, or older than the last one kept, changes nothing; types the report
// leaves out run none.
func (s *Service) OnFormationStatus(ctx context.Context, tx Tx, r *zonev1.FormationStatus) error {
	app, err := tx.App(ctx, r.GetAppId())
	if err != nil {
		if errors.Is(err, deploy.ErrAppNotFound) {
			return nil
		}
		return err
	}
	if app.Deleted || app.Kind != "service" {
		return nil
	}
	if r.GetZone() != app.Zone {
		s.log.WarnContext(ctx, "a zone reported the formation of an app it does not host", "app", app.ID, "zone", r.GetZone())
		return nil
	}
	at := r.GetAt().AsTime().UTC()
	st, f, err := tx.LockFormation(ctx, app.ID)
	if err != nil {
		return err
	}
	if st.DeployID == "" || st.DeployID != r.GetDeployId() || (st.StatusAt != nil && at.Before(*st.StatusAt)) {
		return nil
	}
	running := make(map[string]int64, len(r.GetProcesses()))
	for _, p := range r.GetProcesses() {
		running[p.GetType()] = max(p.GetRunning(), 0)
	}
	for i := range f {
		f[i].Running = running[f[i].Type]
	}
	st.StatusAt = &at
	return tx.SaveFormation(ctx, app.ID, st, f)
}

func (s *Service) publishScale(ctx context.Context, tx Tx, app App, st FormationState, f []deploy.FormationEntry) error {
	if st.DeployID == "" {
		return fmt.Errorf("usecase: a formation that follows no deploy cannot be sent")
	}
	return tx.Publish(ctx, zonebus.CommandKey(app.Zone, zonebus.CommandFormation), &zonev1.ScaleFormation{
		AppId: app.ID, DeployId: st.DeployID, Formation: quantities(f), FormationGeneration: st.Generation,
	})
}

func quantities(f []deploy.FormationEntry) []*zonev1.ProcessQuantity {
	out := make([]*zonev1.ProcessQuantity, 0, len(f))
	for _, e := range f {
		out = append(out, &zonev1.ProcessQuantity{Type: e.Type, Quantity: e.Quantity})
	}
	return out
}
