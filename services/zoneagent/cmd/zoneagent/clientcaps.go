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
	"tori.dev/services/zoneagent/internal/managed"
	"tori.dev/services/zoneagent/internal/pooler"
	"tori.dev/services/zoneagent/internal/store"
)

// clientCapsEvery is how often the caps follow databases made and dropped and apps given
// their uid (an app that has not run yet has no connections to cap).
const clientCapsEvery = 5 * time.Second

// poolerClientCaps loads the zone's per-app caps on connections to the pooler
// (managed/clientcaps.go) and returns the job that keeps them in step; ok is false when the
// host cannot have them (not root, no nft), which the agent says. remove takes the table away
// when the agent (and with it the pooler) stops.
func poolerClientCaps(cfg config.Config, st *store.Store, pooler *pooler.Pooler, log *slog.Logger) (job lifecycle.Job, remove func(), ok bool, err error) {
	nft, err := exec.LookPath(cfg.Nft)
	if os.Geteuid() != 0 || err != nil {
		log.Error("the pooler has no per-app connection caps: they need root and nft (ZONE_NFT)")
		return lifecycle.Job{}, nil, false, nil
	}
	_, port, _ := net.SplitHostPort(cfg.Pooler())
	// Named after the pooler's port too: one table per pooler on the host.
	caps := managed.ClientCaps{Nft: nft, Table: "tori_" + strings.ReplaceAll(cfg.Zone, "-", "_") + "_pooler_" + port,
		Pooler: cfg.Pooler(), UIDLo: cfg.UIDBase + 1, UIDHi: cfg.UIDBase + cfg.UIDCount - 1}
	if err := caps.Init(); err != nil {
		return lifecycle.Job{}, nil, false, err
	}
	var mu sync.Mutex
	var loaded map[uint32]int
	return lifecycle.Job{Name: "pooler client caps", Every: clientCapsEvery, Immediately: true,
		Run: func(ctx context.Context) (int64, error) {
			pools := pooler.AppPools()
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
			if err := caps.Sync(want); err != nil {
				return 0, err
			}
			loaded = want
			return int64(len(want)), nil
		}}, func() { _ = caps.Remove() }, true, nil
}
