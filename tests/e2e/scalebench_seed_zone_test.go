package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// wakeSampleSize is how many napping services the bench wakes (edge wake, restart, memory):
// the first ones seeded, so the larger size measures the same apps as the smaller.
const wakeSampleSize = 100

// zoneSeedState is what seedZone keeps between sizes in scaleWorld.extra["zone"].
type zoneSeedState struct {
	tool     string // the built zone-seed
	template zoneSeedTemplate
	uids     map[string]uint32 // service apps' uids, by app id (their processes are found by it)
	// emptyZoneKB is the zone's own processes' memory with no seeded app, just restarted:
	// what the zone holds whatever its apps (measureMemory takes it off).
	emptyZoneKB int64
}

type zoneSeedTemplate struct {
	AppID    string `json:"app_id"`
	DeployID string `json:"deploy_id"`
}

type zoneSeedApp struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	AccountID string `json:"account_id"`
	Kind      string `json:"kind"`
	DeployID  string `json:"deploy_id"`
	WithTree  bool   `json:"with_tree"`
}

// seedZone puts every app of w not yet ZoneSeeded live in the zone (issue 41), as if the
// zone had prepared and activated its live deploy, through the zone's own store and site
// code (services/zoneagent/cmd/zone-seed): each static app's site in the zone's bucket, each
// service app a clone of one service the zone really prepared (deployed through the API
// here, once); the wake sample's services get their built tree on a disk image of their own,
// the others only their records (the bench never wakes them). The agent is then restarted,
// so it reads every route back as it would after any restart.
func seedZone(b *testing.B, s *harness.Stack, w *scaleWorld) {
	b.Helper()
	st := zoneState(b, s, w)
	sampled := 0
	for _, a := range w.apps {
		if a.WakeSample {
			sampled++
		}
	}
	var apps []zoneSeedApp
	var seeded []int
	for i := range w.apps {
		a := &w.apps[i]
		if a.ZoneSeeded || a.Measured || a.liveDeploy() == "" {
			continue
		}
		if a.Kind == "service" && sampled < wakeSampleSize {
			a.WakeSample = true
			sampled++
		}
		apps = append(apps, zoneSeedApp{ID: a.ID, Slug: a.Slug, AccountID: w.accounts[a.Account].ID, Kind: a.Kind,
			DeployID: a.liveDeploy(), WithTree: a.WakeSample})
		seeded = append(seeded, i)
	}
	if len(apps) == 0 {
		return
	}
	start := time.Now()
	reply := runZoneSeed(b, s, st, apps)
	for id, uid := range reply.UIDs {
		st.uids[id] = uid
	}
	for _, i := range seeded {
		w.apps[i].ZoneSeeded = true
	}
	// The agent reads the routes on record when it starts.
	s.Stop("zoneagent")
	s.Restart("zoneagent")
	seededIn := time.Since(start)
	// Each new site is visited once, as a zone in service has served each of its sites: its
	// certificate is issued and kept now, so a restart measures loading it, not issuing it.
	// The sampled services get theirs on their first wake (measureEdge), the same way.
	client := oneShotEdgeClient(s)
	var retried atomic.Int64
	eachParallel(servingWorkers, len(seeded), func(i int) {
		if a := w.apps[seeded[i]]; a.Kind == "static" {
			retryUntil(b, 2*time.Minute, &retried, func() error { return getStatic(client, s, a) })
		}
	})
	b.Logf("zone: seeded %d static and %d service apps (%d with a tree; seed %s), restarted the agent in %s, visited the new sites in %s (%d retried)",
		reply.Static, reply.Services, reply.Trees, reply.Took, seededIn.Round(time.Millisecond), (time.Since(start) - seededIn).Round(time.Millisecond), retried.Load())
}

// zoneState is seedZone's state, made on first use: the seed tool built and the template
// service deployed.
func zoneState(b *testing.B, s *harness.Stack, w *scaleWorld) *zoneSeedState {
	b.Helper()
	if w.extra == nil {
		w.extra = map[string]any{}
	}
	if st, ok := w.extra["zone"].(*zoneSeedState); ok {
		return st
	}
	st := &zoneSeedState{tool: buildZoneSeed(b), template: deployZoneTemplate(b, s), uids: map[string]uint32{}}
	w.extra["zone"] = st
	s.Stop("zoneagent")
	s.Restart("zoneagent")
	settle()
	st.emptyZoneKB = measureZoneMemory(s.Pid(b, "zoneagent"), nil).zoneKB
	// Registered after the stack's own clean-ups, so it runs before them: the apps' disks
	// stay mounted when the agent stops, and the harness removes their folders after. The
	// agent is stopped first, its apps' processes with it, so none mounts a disk again.
	b.Cleanup(func() {
		s.Stop("zoneagent")
		unmountAppDisks(b, s.Env["ZONE_APPS_DIR"])
	})
	return st
}

// unmountAppDisks detaches every filesystem mounted under appsDir (each woken app's disk):
// nothing else unmounts them, and each holds a loop device and its image until then. A
// folder can hold more than one (mounted over each other), so it looks again until none is
// left.
func unmountAppDisks(b *testing.B, appsDir string) {
	if appsDir == "" {
		return
	}
	for range 10 {
		info, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			return
		}
		found := 0
		for _, line := range strings.Split(string(info), "\n") {
			f := strings.Fields(line)
			if len(f) > 4 && strings.HasPrefix(f[4], appsDir+"/") {
				found++
				if err := syscall.Unmount(f[4], syscall.MNT_DETACH); err != nil {
					b.Logf("unmount %s: %v", f[4], err)
				}
			}
		}
		if found == 0 {
			return
		}
	}
}

// buildZoneSeed builds the zoneagent module's seed tool into a temporary folder.
func buildZoneSeed(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "zone-seed")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/zone-seed")
	cmd.Dir = filepath.Join("..", "..", "services", "zoneagent")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build zone-seed: %v\n%s", err, msg)
	}
	return out
}

// deployZoneTemplate deploys the service every seeded service app is a copy of: a Node
// server started by tori.json's start line (no build), prepared and activated for real.
func deployZoneTemplate(b *testing.B, s *harness.Stack) zoneSeedTemplate {
	b.Helper()
	acct := s.NewAccount(b, "zone-template")
	slug := createApp(b, s, acct.Token, "service")
	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	r := deploySource(b, s, acct.Token, slug, sourceTarball(b, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"seeded"}`}), "")
	waitLive(b, s, acct.Token, slug, r)
	app := s.Get(b, "/api/apps/"+slug, acct.Token)
	if app.Status != http.StatusOK {
		b.Fatalf("template app: %d %s", app.Status, app.Body)
	}
	return zoneSeedTemplate{AppID: app.Map(b)["id"].(string), DeployID: r.Map(b)["id"].(string)}
}

type zoneSeedReply struct {
	Static   int               `json:"static"`
	Services int               `json:"services"`
	Trees    int               `json:"trees"`
	UIDs     map[string]uint32 `json:"uids"`
	Took     string            `json:"took"`
}

// runZoneSeed runs the seed tool with the zone agent's own settings and credentials.
func runZoneSeed(b *testing.B, s *harness.Stack, st *zoneSeedState, apps []zoneSeedApp) zoneSeedReply {
	b.Helper()
	req, _ := json.Marshal(map[string]any{"template": st.template, "apps": apps, "parallel": 8})
	cmd := exec.Command(st.tool)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range s.Env {
		if k != "DATABASE_URL" && k != "AMQP_URL" && k != "GATEWAY_SIGNING_KEY" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	for k, v := range s.Credentials("zoneagent") {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("zone-seed: %v\n%s", err, strings.TrimSpace(stderr.String()))
	}
	var reply zoneSeedReply
	if err := json.Unmarshal(stdout.Bytes(), &reply); err != nil {
		b.Fatalf("zone-seed's reply %q: %v", stdout.String(), err)
	}
	return reply
}
