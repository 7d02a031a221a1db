package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/names"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// previewGet requests path of the preview's revision through its wake and dial.
func (r *rig) previewGet(rev revision.Revision, path string) string {
	r.t.Helper()
	w := httptest.NewRecorder()
	route := edge.Route{AppID: rev.AppID, DeployID: rev.DeployID, Kind: rev.Kind, PreviewID: rev.PreviewID}
	throughInstances{r.l}.ServeHTTP(w, httptest.NewRequest("GET", path, nil), route)
	return w.Body.String()
}

func (l *Local) previewWeb(id string) *proc {
	l.previews.mu.Lock()
	defer l.previews.mu.Unlock()
	if pp := l.previews.byID[id]; pp != nil {
		return pp.web
	}
	return nil
}

// A service preview runs one web instance in the app's sandbox beside the app's live
// instance, never replacing it: its environment says TORI_PREVIEW=1 and names it
// preview.<id>, it naps after IdleAfter even on a plan that keeps the app awake (the app's
// instance does not nap, and no nap of the app is reported), its next request wakes it, a
// newer revision of the preview replaces it, and StopPreview stops it.
func TestServicePreviewNapsAndWakes(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	src := tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS})
	live := r.revision(app, src, nil)
	pv := r.revision(app, src, nil)
	pv.PreviewID = names.NewPreviewID()
	revs := map[string]revision.Revision{live.DeployID: live, pv.DeployID: pv}
	r.l.Revision = func(_ context.Context, id string) (revision.Revision, error) { return revs[id], nil }
	r.l.IdleAfter = time.Minute
	var napped []bool
	r.l.Napped = func(_ context.Context, _ string, n bool) { napped = append(napped, n) }
	ctx := context.Background()
	if err := r.l.Prepare(ctx, live, r.jobs); err != nil {
		t.Fatal(err)
	}
	if err := r.l.Activate(ctx, live, "", revision.Formation{}); err != nil {
		t.Fatal(err)
	}
	if err := r.l.Prepare(ctx, pv, r.jobs); err != nil {
		t.Fatal(err)
	}
	if err := r.l.ActivatePreview(ctx, pv); err != nil {
		t.Fatal(err)
	}
	appWeb, first := r.l.activeWeb(app), r.l.previewWeb(pv.PreviewID)
	if appWeb == nil || first == nil || !appWeb.alive() || !first.alive() {
		t.Fatal("the app's and the preview's instances do not both run")
	}
	var vars map[string]string
	if err := json.Unmarshal([]byte(r.previewGet(pv, "/env")), &vars); err != nil {
		t.Fatal(err)
	}
	if vars["TORI_PREVIEW"] != "1" || vars["TORI_PROCESS"] != names.PreviewProcess(pv.PreviewID) {
		t.Fatalf("the preview's environment: TORI_PREVIEW=%q TORI_PROCESS=%q", vars["TORI_PREVIEW"], vars["TORI_PROCESS"])
	}
	// A map of its own: Unmarshal into the preview's map would keep the preview's keys.
	var liveVars map[string]string
	if got := r.get(app, live.DeployID, "/env"); json.Unmarshal([]byte(got), &liveVars) != nil || liveVars["TORI_PROCESS"] != "web.1" || liveVars["TORI_PREVIEW"] != "" {
		t.Fatalf("the app's live instance has TORI_PREVIEW: %q", got)
	}

	r.l.napIdle(ctx, time.Now().Add(30*time.Second))
	if !first.alive() {
		t.Fatal("the preview napped before IdleAfter")
	}
	r.l.napIdle(ctx, time.Now().Add(2*time.Minute))
	if first.alive() || r.l.previewWeb(pv.PreviewID) != nil {
		t.Fatal("the preview did not nap")
	}
	if !appWeb.alive() || len(napped) != 0 {
		t.Fatalf("the app (minScale 1) was touched by the preview's nap: alive=%v napped=%v", appWeb.alive(), napped)
	}
	if got := r.previewGet(pv, "/"); got != "ok unreleased" {
		t.Fatalf("wake of a napping preview: %q", got)
	}
	woken := r.l.previewWeb(pv.PreviewID)
	if woken == nil || woken == first || !woken.alive() {
		t.Fatal("the preview was not woken by its request")
	}

	next := r.revision(app, src, nil)
	next.PreviewID = pv.PreviewID
	revs[next.DeployID] = next
	if err := r.l.Prepare(ctx, next, r.jobs); err != nil {
		t.Fatal(err)
	}
	if err := r.l.ActivatePreview(ctx, next); err != nil {
		t.Fatal(err)
	}
	if woken.alive() {
		t.Fatal("the preview's previous instance still runs after its replacement")
	}
	if _, err := r.l.WakePreview(ctx, edge.Route{AppID: app, DeployID: pv.DeployID, Kind: pv.Kind, PreviewID: pv.PreviewID}); err == nil {
		t.Fatal("a wake of the preview's replaced revision was answered")
	}
	current := r.l.previewWeb(pv.PreviewID)
	if err := r.l.StopPreview(ctx, app, pv.PreviewID); err != nil {
		t.Fatal(err)
	}
	if current == nil || current.alive() || r.l.previewWeb(pv.PreviewID) != nil {
		t.Fatal("StopPreview left the preview's instance running")
	}
	if !appWeb.alive() {
		t.Fatal("removing the preview stopped the app's live instance")
	}
	if got := r.get(app, live.DeployID, "/"); got != "ok unreleased" {
		t.Fatalf("the app after its preview went: %q", got)
	}
}

// plainLaunch starts a "web instance" as a plain HTTP listener on the host answering with
// its revision's id: the preview's bookkeeping (nap, wake, replace, stop, dial) without a
// sandbox.
type plainLaunch struct {
	deployID string
	starts   int
}

func (p *plainLaunch) processes() []revision.Process {
	return []revision.Process{{Name: revision.Web}}
}

func (p *plainLaunch) start(_ context.Context, pt revision.Process, n int) (*proc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.starts++
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("rev " + p.deployID)) })}
	go srv.Serve(ln)
	pr := &proc{appID: "app", deployID: p.deployID, ptype: pt.Name, n: n, port: ln.Addr().(*net.TCPAddr).Port, exited: make(chan struct{}), status: -1}
	pr.cancel = func() { srv.Close(); close(pr.exited) }
	pr.lastUsed.Store(time.Now().UnixNano())
	return pr, nil
}

// The preview's instance, as the edge reaches it: it naps after IdleAfter whatever the plan,
// its next request starts it again from the kept launcher, a newer revision replaces it (a
// wake of the older is gone), and StopPreview stops it; the app's own instances are never
// consulted.
func TestPreviewInstanceLifecycle(t *testing.T) {
	l := &Local{IdleAfter: time.Minute}
	defer l.stopAppPreviews("")
	ctx := context.Background()
	id := names.NewPreviewID()
	d1, d2 := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	ln1, ln2 := &plainLaunch{deployID: d1}, &plainLaunch{deployID: d2}
	get := func(deployID string) string {
		t.Helper()
		w := httptest.NewRecorder()
		throughInstances{l}.ServeHTTP(w, httptest.NewRequest("GET", "/", nil), edge.Route{AppID: "app", DeployID: deployID, Kind: revision.KindSource, PreviewID: id})
		return w.Body.String()
	}
	first, _ := ln1.start(ctx, revision.Process{Name: revision.Web}, 1)
	l.procs.keepPrepared(d1, &preparedRev{appID: "app", web: first, launch: ln1})
	if err := l.ActivatePreview(ctx, revision.Revision{AppID: "app", DeployID: d1, PreviewID: id, Kind: revision.KindSource}); err != nil {
		t.Fatal(err)
	}
	if got := get(d1); got != "rev "+d1 {
		t.Fatalf("preview answers %q", got)
	}
	if n := l.napIdle(ctx, time.Now().Add(2*time.Minute)); n != 1 || first.alive() {
		t.Fatalf("napped %d, first alive %v", n, first.alive())
	}
	if got := get(d1); got != "rev "+d1 || ln1.starts != 2 {
		t.Fatalf("wake: %q after %d starts", got, ln1.starts)
	}
	woken := l.previewWeb(id)
	second, _ := ln2.start(ctx, revision.Process{Name: revision.Web}, 1)
	l.procs.keepPrepared(d2, &preparedRev{appID: "app", web: second, launch: ln2})
	if err := l.ActivatePreview(ctx, revision.Revision{AppID: "app", DeployID: d2, PreviewID: id, Kind: revision.KindSource}); err != nil {
		t.Fatal(err)
	}
	if woken.alive() {
		t.Fatal("the replaced revision's instance runs on")
	}
	if _, err := l.WakePreview(ctx, edge.Route{AppID: "app", DeployID: d1, PreviewID: id}); !errors.Is(err, edgelink.ErrGone) {
		t.Fatalf("wake of the replaced revision: %v, want ErrGone", err)
	}
	if got := get(d2); got != "rev "+d2 {
		t.Fatalf("replaced preview answers %q", got)
	}
	if err := l.StopPreview(ctx, "other-app", id); err != nil || !second.alive() {
		t.Fatalf("a stop naming another app stopped it: %v", err)
	}
	if err := l.StopPreview(ctx, "app", id); err != nil || second.alive() {
		t.Fatalf("StopPreview: %v, alive %v", err, second.alive())
	}
	if _, err := l.Dial(ctx, instanceID(second)); !errors.Is(err, edgelink.ErrGone) {
		t.Fatalf("dial of a stopped preview instance: %v", err)
	}
}

// A promote reuses the preview's built tree when the app's folder holds it: copied as the
// app's uid (a file the app's uid cannot read is not copied, and the copy fails over to a
// build), owned by it; a built-from revision without a tree is no reuse.
func TestReuseTreeCopiesTheBuiltTreeAsTheAppsUID(t *testing.T) {
	// Traversable by the app's uid, as ZONE_APPS_DIR is (a test's TempDir is not).
	apps, err := os.MkdirTemp("", "tori-reuse-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(apps, 0o711)
	t.Cleanup(func() { os.RemoveAll(apps) })
	sb := &sandbox.Sandbox{}
	ids := &Identities{AppsDir: apps, Sandbox: sb}
	s := &SourceRuntime{Identities: ids, Sandbox: sb, Output: &Output{Sink: &sink{}, LinesPerSecond: 100}}
	app, from, to := uuid.NewString(), uuid.NewString(), uuid.NewString()
	const uid = 250123
	sb.SetUID(app, uid)
	src := ids.Tree(app, from)
	if err := os.MkdirAll(filepath.Join(src, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "bin", "server"), []byte("built"), 0o755)
	os.Symlink("/etc/shadow", filepath.Join(src, "link"))
	if err := ids.Own(app, src); err != nil {
		t.Fatal(err)
	}
	rev := revision.Revision{AppID: app, DeployID: to, BuiltFromDeployID: from}
	if !s.reuseTree(context.Background(), rev, ids.Tree(app, to)) {
		t.Fatal("the built tree was not reused")
	}
	dst := ids.Tree(app, to)
	if b, err := os.ReadFile(filepath.Join(dst, "bin", "server")); err != nil || string(b) != "built" {
		t.Fatalf("copied file: %q %v", b, err)
	}
	if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != "/etc/shadow" {
		t.Fatalf("a link was not copied as a link: %q %v", target, err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dst, "bin", "server"), &st); err != nil || st.Uid != uid {
		t.Fatalf("copied file owned by %d (%v), want %d", st.Uid, err, uid)
	}
	// A file the app's uid may not read (root's, 0600) fails the copy: nothing is half-made.
	os.WriteFile(filepath.Join(src, "root-only"), []byte("x"), 0o600)
	os.Lchown(filepath.Join(src, "root-only"), 0, 0)
	again := revision.Revision{AppID: app, DeployID: uuid.NewString(), BuiltFromDeployID: from}
	if s.reuseTree(context.Background(), again, ids.Tree(app, again.DeployID)) {
		t.Fatal("a tree the app's uid cannot read all of was copied")
	}
	if _, err := os.Lstat(ids.Tree(app, again.DeployID)); !os.IsNotExist(err) {
		t.Fatalf("a failed copy left its tree: %v", err)
	}
	none := revision.Revision{AppID: app, DeployID: uuid.NewString(), BuiltFromDeployID: uuid.NewString()}
	if s.reuseTree(context.Background(), none, ids.Tree(app, none.DeployID)) {
		t.Fatal("reused a tree that does not exist")
	}
}
