package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/objectstore"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
	"tori.dev/services/zoneagent/internal/sites"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// ErrNoTemplate: service apps were asked for without a prepared revision to clone.
var ErrNoTemplate = errors.New("service apps need a template: a prepared, active source revision")

// appsPerTx is how many apps one transaction records: few round trips each, and a failure
// loses one batch, not the seed.
const appsPerTx = 250

type seeder struct {
	cfg   config.Config
	pool  *pgxpool.Pool
	store *store.Store
	sites sites.Store
	disks sandbox.Disks
}

func open(ctx context.Context, cfg config.Config) (*seeder, error) {
	pool, err := store.Connect(ctx, cfg.DatabaseURL, cfg.Zone)
	if err != nil {
		return nil, fmt.Errorf("the zone's database: %w", err)
	}
	bucket, err := objectstore.New(cfg.ObjectStoreConfig())
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("the zone's bucket: %w", err)
	}
	// Where the runner keeps each app's disk image (cmd/zoneagent/runner.go).
	disks := sandbox.Disks{Dir: cfg.DataDir + "/disks", Bytes: cfg.DiskBytes, Mkfs: "mkfs.ext4"}
	return &seeder{cfg: cfg, pool: pool, store: store.New(pool), sites: sites.Store{Bucket: bucket}, disks: disks}, nil
}

func (s *seeder) close() { s.pool.Close() }

func (s *seeder) seed(ctx context.Context, req Request) (Reply, error) {
	reply := Reply{UIDs: map[string]uint32{}}
	var static, services []App
	for _, a := range req.Apps {
		switch a.Kind {
		case "static":
			static = append(static, a)
		case "service":
			services = append(services, a)
		default:
			return reply, fmt.Errorf("app %s: kind %q, want static or service", a.ID, a.Kind)
		}
	}
	var tpl template
	if len(services) > 0 {
		var err error
		if tpl, err = s.loadTemplate(ctx, req.Template); err != nil {
			return reply, err
		}
	}
	// The objects first, then the records: a route on record always has its site.
	if err := s.publishSites(ctx, static, req.Parallel); err != nil {
		return reply, err
	}
	uids, err := s.allocateUIDs(ctx, services)
	if err != nil {
		return reply, err
	}
	trees, err := s.makeTrees(ctx, tpl, services, uids, req.Parallel)
	if err != nil {
		return reply, err
	}
	if err := s.record(ctx, tpl, req.Apps, req.Parallel); err != nil {
		return reply, err
	}
	reply.Static, reply.Services, reply.Trees, reply.UIDs = len(static), len(services), trees, uids
	return reply, nil
}

// IndexHTML is a seeded site's only file: it names its app, so a 200 can be told from
// another app's.
func IndexHTML(slug string) string {
	return "<!doctype html><title>" + html.EscapeString(slug) + "</title><p>seeded site " + html.EscapeString(slug) + "\n"
}

// publishSites publishes each static app's live revision as a deploy would: its bundle and
// manifest under sites/<app>/<deploy>/ in the zone's bucket.
func (s *seeder) publishSites(ctx context.Context, apps []App, parallel int) error {
	return each(ctx, parallel, apps, func(ctx context.Context, a App) error {
		body := IndexHTML(a.Slug)
		err := s.sites.PublishFiles(ctx, a.ID, a.DeployID, func(add func(string, int64, io.Reader) error) error {
			return add("index.html", int64(len(body)), strings.NewReader(body))
		})
		if err != nil {
			return fmt.Errorf("publish %s: %w", a.Slug, err)
		}
		return nil
	})
}

// allocateUIDs gives each service app its uid, as preparing it does (Identities.Ensure):
// the lowest free one of the zone's range.
func (s *seeder) allocateUIDs(ctx context.Context, apps []App) (map[string]uint32, error) {
	out := map[string]uint32{}
	lo, hi := s.cfg.UIDBase+1, s.cfg.UIDBase+s.cfg.UIDCount-1
	for _, a := range apps {
		uid, err := s.store.AllocateUID(ctx, a.ID, lo, hi)
		if err != nil {
			return nil, fmt.Errorf("uid of %s: %w", a.Slug, err)
		}
		out[a.ID] = uid
	}
	return out, nil
}

// record writes, per app, what activating its revision leaves on record: the revision
// (active), its route and account, and for a service its formation.
func (s *seeder) record(ctx context.Context, tpl template, apps []App, parallel int) error {
	var batches [][]App
	for from := 0; from < len(apps); from += appsPerTx {
		batches = append(batches, apps[from:min(from+appsPerTx, len(apps))])
	}
	return each(ctx, parallel, batches, func(ctx context.Context, batch []App) error {
		return s.store.InTx(ctx, func(tx usecase.Tx) error {
			for _, a := range batch {
				if err := recordApp(ctx, tx, tpl, a); err != nil {
					return fmt.Errorf("record %s: %w", a.Slug, err)
				}
			}
			return nil
		})
	})
}

func recordApp(ctx context.Context, tx usecase.Tx, tpl template, a App) error {
	rev := revision.Revision{DeployID: a.DeployID, AppID: a.ID, Slug: a.Slug, Kind: revision.KindStatic,
		ArtifactKey: "artifacts/" + a.ID + "/" + a.DeployID, BuildMinutes: 10, ActivateWanted: true}
	if a.Kind == "service" {
		rev = tpl.clone(a)
	}
	if _, err := tx.AddRevision(ctx, rev); err != nil {
		return err
	}
	if err := tx.SetState(ctx, a.DeployID, revision.StatePending, revision.StateActive); err != nil {
		return err
	}
	if a.AccountID != "" {
		if err := tx.SetAppAccount(ctx, a.ID, a.AccountID); err != nil {
			return err
		}
	}
	if a.Kind == "service" {
		if _, err := tx.SetFormation(ctx, a.ID, a.DeployID, tpl.formation); err != nil {
			return err
		}
	}
	return tx.SetLive(ctx, revision.Route{AppID: a.ID, Slug: a.Slug, DeployID: a.DeployID, Kind: rev.Kind})
}
