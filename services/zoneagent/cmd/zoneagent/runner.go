package main

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/sandbox"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/supervisor"
	"tori.dev/services/zoneagent/internal/usecase"
)

// newRunner makes the runner of service revisions and clears what a previous run left:
// processes inside the apps folder, and containers no live route names.
func newRunner(ctx context.Context, cfg config.Config, st *store.Store, env supervisor.EnvOpener, artifacts artifact.Source, logs supervisor.LogSink, log *slog.Logger) (*supervisor.Local, error) {
	appsDir := appsDir(cfg)
	// Traverse-only for others: each app's uid reaches its own folder (0700) and lists nothing.
	if err := os.MkdirAll(appsDir, 0o711); err != nil {
		return nil, err
	}
	if err := os.Chmod(appsDir, 0o711); err != nil {
		return nil, err
	}
	sb := sandbox.NewSandbox(ctx, sandbox.SandboxConfig{
		Zone: cfg.Zone, Bwrap: cfg.Bwrap, Pasta: cfg.Pasta, Nft: cfg.Nft, CgroupMount: cfg.CgroupMount,
		UIDBase: cfg.UIDBase, UIDCount: cfg.UIDCount, MemoryBytes: cfg.MemoryBytes, MaxProcesses: cfg.MaxProcesses,
		MaxOpenFiles: cfg.MaxOpenFiles, DiskBytes: cfg.DiskBytes, PoolerPort: cfg.PoolerPort, GoRoot: goRoot(cfg, log),
		Resolvers: cfg.SandboxResolverAddrs(),
	})
	if sb.Resolver != nil && len(sb.Resolver.Upstreams) == 0 {
		log.WarnContext(ctx, "the sandboxes' resolver has no upstream (ZONE_SANDBOX_RESOLVERS unset, no nameserver in /etc/resolv.conf): builds cannot reach npm, PyPI or the Go module proxy by name")
	}
	if sb.Unavailable != "" {
		// The one line an operator needs: customer code will not run here, and why.
		log.ErrorContext(ctx, "sandbox unavailable: source deploys will fail with sandbox_unavailable; static sites are served: "+sb.Unavailable)
	} else {
		log.InfoContext(ctx, "service sandbox", "appsDir", appsDir, "bwrap", sb.Bwrap, "pasta", sb.Pasta, "resolverUpstreams", sb.Resolver.Upstreams,
			"cgroupV2", sb.Cgroups.V2, "imageRuntime", cfg.ImageRuntime)
	}
	containers, err := containerRuntime(cfg)
	if err != nil {
		return nil, err
	}
	var disks *sandbox.Disks
	if mkfs, err := exec.LookPath("mkfs.ext4"); err == nil {
		disks = &sandbox.Disks{Dir: filepath.Join(cfg.DataDir, "disks"), Bytes: cfg.DiskBytes, Mkfs: mkfs}
	} else if sb.Unavailable == "" {
		sb.Unavailable = "mkfs.ext4 (e2fsprogs) not found, so apps' disks cannot be bounded"
		log.ErrorContext(ctx, "sandbox unavailable: "+sb.Unavailable)
	}
	local := newLocal(cfg, appsDir, &sb, disks, containers, st, env, artifacts, logs, log)
	if n := supervisor.ReapOrphans(appsDir); n > 0 {
		log.WarnContext(ctx, "killed processes a previous run left behind", "count", n)
	}
	live, err := st.Routes(ctx)
	if err != nil {
		return nil, err
	}
	if n, err := local.RecoverContainers(ctx, live); err != nil {
		return nil, fmt.Errorf("recover containers: %w", err)
	} else if n > 0 {
		log.WarnContext(ctx, "removed containers a previous run left behind", "count", n)
	}
	// The live revisions' workers (web waits for a request), in the background: it reads each
	// service app's formation, which must not hold the edge back from serving the rest.
	go local.RecoverFormations(ctx, live)
	return local, nil
}

// newLocal puts the runner together: both runtimes share the apps' identities (uids,
// folders, disks), the sandbox's limits and the deploys' environments.
func newLocal(cfg config.Config, appsDir string, sb *sandbox.Sandbox, disks *sandbox.Disks, containers imageruntime.ContainerRuntime,
	st *store.Store, env supervisor.EnvOpener, artifacts artifact.Source, logs supervisor.LogSink, log *slog.Logger) *supervisor.Local {
	ids := &supervisor.Identities{AppsDir: appsDir, Sandbox: sb, UIDs: st, UIDBase: cfg.UIDBase, UIDCount: cfg.UIDCount, Disks: disks}
	return &supervisor.Local{
		Source: &supervisor.SourceRuntime{Identities: ids, Artifacts: artifacts, Sandbox: sb, Env: env, Log: log,
			Output: &supervisor.Output{Sink: logs, LinesPerSecond: cfg.LogLinesPerSecond}},
		Image:      &supervisor.ImageRuntime{Containers: containers, Identities: ids, Sandbox: sb, Env: env, Logs: logs, Log: log},
		Identities: ids,
		Revision:   st.Revision, Formation: st.Formation, IdleAfter: cfg.IdleAfter,
		Napped:           usecase.Scale{Store: st, Zone: cfg.Zone, Log: log}.Changed,
		FormationChanged: usecase.Formations{Store: st, Zone: cfg.Zone, Log: log}.Changed,
		Log:              log,
	}
}

// containerRuntime is the CLI ZONE_IMAGE_RUNTIME names (docker, podman or a path), or nil
// when it is unset. A name the host cannot find, or containers' forward rules that cannot
// be loaded, stop the agent at start rather than failing every image deploy later or
// running containers without the network promise.
func containerRuntime(cfg config.Config) (imageruntime.ContainerRuntime, error) {
	if cfg.ImageRuntime == "" {
		return nil, nil
	}
	path, err := exec.LookPath(cfg.ImageRuntime)
	if err != nil {
		return nil, fmt.Errorf("ZONE_IMAGE_RUNTIME: %w", err)
	}
	fw := imageruntime.ContainerFirewall{Nft: cfg.Nft, Table: "tori_" + strings.ReplaceAll(cfg.Zone, "-", "_") + "_images"}
	if err := fw.Apply(); err != nil {
		return nil, fmt.Errorf("ZONE_IMAGE_RUNTIME: the containers' network rules: %w", err)
	}
	puller, err := registryPuller(cfg)
	if err != nil {
		return nil, err
	}
	return imageruntime.CLI{Path: path, Env: imageruntime.RuntimeEnv(os.Getenv), Registry: puller}, nil
}

// registryPuller is the zone's registry client: the full deny list, but for the tests'
// registry name (ZONE_TEST_REGISTRY_HOST, .test only) on loopback.
func registryPuller(cfg config.Config) (imageruntime.RegistryPuller, error) {
	if cfg.TestRegistryHost == "" {
		return imageruntime.RegistryPuller{}, nil
	}
	pem, err := os.ReadFile(cfg.TestRegistryCA)
	if err != nil {
		return imageruntime.RegistryPuller{}, fmt.Errorf("ZONE_TEST_REGISTRY_CA: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return imageruntime.RegistryPuller{}, errors.New("ZONE_TEST_REGISTRY_CA holds no certificate")
	}
	host := cfg.TestRegistryHost
	return imageruntime.RegistryPuller{
		Resolver: testRegistryResolver{host: host},
		Allow:    func(h string, a netip.Addr) bool { return h == host && a.IsLoopback() },
		RootCAs:  roots,
	}, nil
}

// testRegistryResolver answers 127.0.0.1 for the tests' registry name and asks the system
// for every other.
type testRegistryResolver struct{ host string }

func (r testRegistryResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if host == r.host {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}

// appsDir is where customer trees live. Under root with per-app users, it must be reachable
// by those users, and DATA_DIR (often 0700, and holding the control plane's files) is not;
// so the default is a folder of its own under the system temp dir, named after DATA_DIR.
func appsDir(cfg config.Config) string {
	if cfg.AppsDir != "" {
		return cfg.AppsDir
	}
	abs, _ := filepath.Abs(cfg.DataDir)
	sum := sha256.Sum256([]byte(abs + "\x00" + cfg.Zone))
	return filepath.Join(os.TempDir(), "tori-zone-"+cfg.Zone+"-"+hex.EncodeToString(sum[:6]))
}

// goRoot is the Go toolchain builds get (ZONE_GO_ROOT, else the go on PATH's); "" when
// there is none, and Go sources then fail to build saying so.
func goRoot(cfg config.Config, log *slog.Logger) string {
	switch cfg.GoRoot {
	case "none":
		return ""
	case "":
		root := sandbox.FindGoRoot()
		if root == "" {
			log.Warn("no go on PATH: Go sources will not build here (set ZONE_GO_ROOT)")
		}
		return root
	}
	root := sandbox.GoRootOf(filepath.Join(cfg.GoRoot, "bin", "go"))
	if root == "" {
		log.Warn("ZONE_GO_ROOT holds no Go toolchain (bin/go and src/runtime): Go sources will not build here", "path", cfg.GoRoot)
	}
	return root
}
