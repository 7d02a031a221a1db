package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The sandbox's families on the zone agent's /metrics (pkg/metrics). No app id is a label:
// a zone hosts many apps, and per-app figures belong to the customer's own views.
var (
	sandboxStarts = promauto.NewCounter(prometheus.CounterOpts{
		Name: "tori_zone_sandbox_starts_total",
		Help: "Sandboxed processes started (deploys, wakes and restarts).",
	})
	sandboxLive = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "tori_zone_sandbox_processes",
		Help: "Sandboxed processes running now.",
	})
)

// RegisterUsage puts the zone's disk and cgroup usage on /metrics, read at each scrape:
// the filesystem holding appsDir, the space the apps' disk images take (disks may be nil),
// and the memory and processes of the zone's control group (cgroups may be nil: no sandbox).
// Called again (an agent restarted within one process, as tests do), it points the one
// collector at the new runner.
func RegisterUsage(appsDir string, disks *Disks, cgroups *Cgroups) {
	usage.mu.Lock()
	usage.appsDir, usage.disks, usage.cgroups = appsDir, disks, cgroups
	usage.mu.Unlock()
	registerUsage.Do(func() { prometheus.MustRegister(usage) })
}

var (
	usage         = &usageCollector{}
	registerUsage sync.Once
)

var (
	diskSizeDesc = prometheus.NewDesc("tori_zone_disk_size_bytes",
		"Size of the filesystem holding the zone's apps.", nil, nil)
	diskUsedDesc = prometheus.NewDesc("tori_zone_disk_used_bytes",
		"Bytes used on the filesystem holding the zone's apps.", nil, nil)
	imagesDesc = prometheus.NewDesc("tori_zone_app_disks_allocated_bytes",
		"Bytes the apps' disk images (sparse) take on the host.", nil, nil)
	memoryDesc = prometheus.NewDesc("tori_zone_cgroup_memory_bytes",
		"Memory charged to the zone's control group (every app's processes).", nil, nil)
	pidsDesc = prometheus.NewDesc("tori_zone_cgroup_processes",
		"Processes and threads in the zone's control group.", nil, nil)
)

type usageCollector struct {
	mu      sync.Mutex
	appsDir string
	disks   *Disks
	cgroups *Cgroups
}

func (u *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{diskSizeDesc, diskUsedDesc, imagesDesc, memoryDesc, pidsDesc} {
		ch <- d
	}
}

// Collect leaves out what it cannot read rather than report a wrong zero.
func (u *usageCollector) Collect(ch chan<- prometheus.Metric) {
	u.mu.Lock()
	defer u.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	var fs syscall.Statfs_t
	if err := syscall.Statfs(u.appsDir, &fs); err == nil {
		size := float64(fs.Blocks) * float64(fs.Bsize)
		gauge(diskSizeDesc, size)
		gauge(diskUsedDesc, size-float64(fs.Bfree)*float64(fs.Bsize))
	}
	if u.disks != nil {
		if n, ok := allocatedBytes(u.disks.Dir); ok {
			gauge(imagesDesc, n)
		}
	}
	if u.cgroups != nil {
		if v, ok := u.cgroups.zoneValue("memory", "memory.current", "memory.usage_in_bytes"); ok {
			gauge(memoryDesc, v)
		}
		if v, ok := u.cgroups.zoneValue("pids", "pids.current", "pids.current"); ok {
			gauge(pidsDesc, v)
		}
	}
}

// allocatedBytes is what the files directly in dir take on disk (blocks, not apparent size).
func allocatedBytes(dir string) (float64, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	var total float64
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			total += float64(st.Blocks) * 512
		}
	}
	return total, true
}

// zoneValue reads one number from the zone's own group folder: file v2 in the unified tree,
// or file v1 in controller's tree.
func (g *Cgroups) zoneValue(controller, v2, v1 string) (float64, bool) {
	path := filepath.Join(g.Root, v2)
	if !g.V2 {
		root, ok := g.Roots[controller]
		if !ok {
			return 0, false
		}
		path = filepath.Join(root, v1)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	return v, err == nil
}
