package main

import (
	"context"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"tori.dev/pkg/lifecycle"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/dbhelper"
	"tori.dev/services/zoneagent/internal/managed"
	"tori.dev/services/zoneagent/internal/pooler"
	"tori.dev/services/zoneagent/internal/store"
)

// clientCapsEvery is how often the caps follow databases made and dropped and apps given
// their uid (an app that has not run yet has no connections to cap).
const clientCapsEvery = 5 * time.Second

// poolerClientCaps makes the zone's table of per-app caps on connections to the pooler
// (managed/clientcaps.go), the root helper's to keep in step; nil when the host cannot have
// them (not root, no nft), which the database host says. The agent takes the table away
// when it stops (and with it the pooler).
func poolerClientCaps(cfg config.Config, log *slog.Logger) (*managed.ClientCaps, error) {
	nft, err := exec.LookPath(cfg.Nft)
	if os.Geteuid() != 0 || err != nil {
		return nil, nil
	}
	_, port, _ := net.SplitHostPort(cfg.Pooler())
	// Named after the pooler's port too: one table per pooler on the host.
	caps := &managed.ClientCaps{Nft: nft, Table: "tori_" + strings.ReplaceAll(cfg.Zone, "-", "_") + "_pooler_" + port,
		Pooler: cfg.Pooler(), UIDLo: cfg.UIDBase + 1, UIDHi: cfg.UIDBase + cfg.UIDCount - 1}
	if err := caps.Init(); err != nil {
		return nil, err
	}
	return caps, nil
}

// clientCapsJob is the database host's job that keeps the caps in step with the pooler's
// databases and the apps' uids, through the root helper.
func clientCapsJob(st *store.Store, pool *pooler.Pooler, helper dbhelper.Client) lifecycle.Job {
	var mu sync.Mutex
	var loaded map[uint32]int
	return lifecycle.Job{Name: "pooler client caps", Every: clientCapsEvery, Immediately: true,
		Run: func(ctx context.Context) (int64, error) {
			pools := pool.AppPools()
			apps := make([]string, 0, len(pools))
			for app := range pools {
				apps = append(apps, app)
			}
			uids, err := st.AppUIDs(ctx, apps)
			if err != nil {
				return 0, err
			}
			want := map[uint32]int{}
			for app, sizes := range pools {
				if uid, ok := uids[app]; ok {
					want[uid] = managed.ClientCap(sizes...)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if loaded != nil && maps.Equal(loaded, want) {
				return 0, nil
			}
			if err := helper.SyncClientCaps(ctx, want); err != nil {
				return 0, err
			}
			loaded = want
			return int64(len(want)), nil
		}}
}
