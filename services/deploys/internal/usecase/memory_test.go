package usecase_test

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/contract/billinghold"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
	"tori.dev/services/deploys/internal/usecase"
)

// memory is an in-memory usecase.Store and usecase.Tx: rows are copied in and out, as a
// database's are, so a use case sees only what it saved. InTx runs the function under one
// lock and rolls back on error, so a refused change leaves nothing behind. Every published
// routing key is kept in order.
type memory struct {
	mu        sync.Mutex
	apps      map[string]usecase.App
	deploys   map[string]deploy.Deploy
	plans     map[string]usecase.Plan
	holds     map[string]deploy.Hold
	uploads   map[string]string // upload id → account
	published []string
	// Previews are tested against Postgres (preview_test.go in httpapi); none here.
	usecase.PreviewTx
}

func (m *memory) Previews(context.Context, string) ([]*preview.Preview, error) { return nil, nil }
func (m *memory) MarkPreviewsDeleted(context.Context, string, time.Time) error { return nil }
func (m *memory) PrunePreviewRevisions(context.Context, int) (int64, error)    { return 0, nil }

func newMemory() *memory {
	return &memory{apps: map[string]usecase.App{}, deploys: map[string]deploy.Deploy{}, plans: map[string]usecase.Plan{},
		holds: map[string]deploy.Hold{}, uploads: map[string]string{}}
}

func (m *memory) InTx(_ context.Context, fn func(usecase.Tx) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	apps, deploys, plans, holds, uploads := maps.Clone(m.apps), maps.Clone(m.deploys), maps.Clone(m.plans), maps.Clone(m.holds), maps.Clone(m.uploads)
	published := slices.Clone(m.published)
	if err := fn(m); err != nil {
		m.apps, m.deploys, m.plans, m.holds, m.uploads, m.published = apps, deploys, plans, holds, uploads, published
		return err
	}
	return nil
}

// Tx.

func (m *memory) LockAccount(context.Context, string) error { return nil }
func (m *memory) CountOpen(_ context.Context, accountID string) (int64, error) {
	var n int64
	for _, d := range m.deploys {
		if d.AccountID == accountID && d.Status.Open() {
			n++
		}
	}
	return n, nil
}
func (m *memory) CountUploads(_ context.Context, accountID string, _ time.Time) (int64, error) {
	var n int64
	for _, a := range m.uploads {
		if a == accountID {
			n++
		}
	}
	return n, nil
}
func (m *memory) InsertUpload(_ context.Context, id, accountID string, _ time.Time) error {
	m.uploads[id] = accountID
	return nil
}
func (m *memory) DeleteUpload(_ context.Context, id string) error { delete(m.uploads, id); return nil }
func (m *memory) Insert(_ context.Context, d *deploy.Deploy) error {
	m.deploys[d.ID] = *d
	return nil
}
func (m *memory) Update(_ context.Context, d *deploy.Deploy) error {
	if _, ok := m.deploys[d.ID]; !ok {
		return deploy.ErrNotFound
	}
	m.deploys[d.ID] = *d
	return nil
}
func (m *memory) SetBuild(_ context.Context, id string, b deploy.Build) error {
	d := m.deploys[id]
	d.Build = &b
	m.deploys[id] = d
	return nil
}
func (m *memory) Deploy(_ context.Context, id string) (*deploy.Deploy, error) {
	d, ok := m.deploys[id]
	if !ok {
		return nil, deploy.ErrNotFound
	}
	return &d, nil
}
func (m *memory) Live(_ context.Context, appID string) (*deploy.Deploy, error) {
	for _, d := range m.deploys {
		if d.AppID == appID && d.Status == deploy.Live {
			return &d, nil
		}
	}
	return nil, nil
}
func (m *memory) OpenDeploys(_ context.Context, appID string) ([]*deploy.Deploy, error) {
	var out []*deploy.Deploy
	for _, d := range m.deploys {
		if d.AppID == appID && d.Status.Open() {
			out = append(out, &d)
		}
	}
	return out, nil
}
func (m *memory) App(_ context.Context, appID string) (usecase.App, error) {
	a, ok := m.apps[appID]
	if !ok {
		return usecase.App{}, deploy.ErrAppNotFound
	}
	return a, nil
}
func (m *memory) SaveApp(_ context.Context, a usecase.App, _ time.Time) error {
	if _, ok := m.apps[a.ID]; !ok {
		m.apps[a.ID] = a
	}
	return nil
}
func (m *memory) MarkAppDeleted(_ context.Context, appID string, _ time.Time) error {
	a := m.apps[appID]
	a.ID, a.Deleted = appID, true
	m.apps[appID] = a
	return nil
}
func (m *memory) SavePlan(_ context.Context, accountID string, p usecase.Plan) error {
	m.plans[accountID] = p
	return nil
}
func (m *memory) SaveHold(_ context.Context, accountID string, h deploy.Hold) error {
	if h.Version >= m.holds[accountID].Version {
		m.holds[accountID] = h
	}
	return nil
}
func (m *memory) RecordRevisionPlan(context.Context, string, int64) error { return nil }
func (m *memory) PurgeApp(_ context.Context, appID string, _ time.Time) error {
	for id, d := range m.deploys {
		if d.AppID == appID {
			delete(m.deploys, id)
		}
	}
	return nil
}
func (m *memory) Publish(_ context.Context, key string, _ proto.Message) error {
	m.published = append(m.published, key)
	return nil
}

// Store, outside a transaction.

func (m *memory) AppBySlug(_ context.Context, accountID, slug string) (usecase.App, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.apps {
		if a.AccountID == accountID && a.Slug == slug && !a.Deleted {
			return a, nil
		}
	}
	return usecase.App{}, deploy.ErrAppNotFound
}
func (m *memory) AppTeam(_ context.Context, slug string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.apps {
		if a.Slug == slug && !a.Deleted {
			return a.AccountID, true, nil
		}
	}
	return "", false, nil
}
func (m *memory) Plan(_ context.Context, accountID string) (usecase.Plan, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plans[accountID]
	return p, ok, nil
}
func (m *memory) Hold(_ context.Context, accountID string) (deploy.Hold, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.holds[accountID]
	return h, ok, nil
}
func (m *memory) StalePlanRevisions(context.Context, int) ([]usecase.StaleRevision, error) {
	return nil, nil
}
func (m *memory) PruneUploads(context.Context, time.Time) (int64, error) { return 0, nil }
func (m *memory) List(_ context.Context, appID string, limit int, before string) ([]*deploy.Deploy, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*deploy.Deploy
	for _, d := range m.deploys {
		if d.AppID == appID {
			out = append(out, &d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	if before != "" {
		i := sort.Search(len(out), func(i int) bool { return out[i].ID < before })
		out = out[i:]
	}
	return out[:min(limit, len(out))], nil
}
func (m *memory) Overdue(_ context.Context, cutoff time.Time, limit int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, d := range m.deploys {
		if d.Status.Open() && !d.CreatedAt.After(cutoff) && len(out) < limit {
			out = append(out, d.ID)
		}
	}
	return out, nil
}
func (m *memory) ArtifactReferenced(context.Context, string) (bool, error)  { return false, nil }
func (m *memory) AppsToClean(context.Context, int) ([]string, error)        { return nil, nil }
func (m *memory) MarkReclaimable(context.Context, time.Time) (int64, error) { return 0, nil }
func (m *memory) ArtifactsOf(context.Context, string) ([]string, error)     { return nil, nil }

// status is a deploy's status as saved.
func (m *memory) status(id string) deploy.Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deploys[id].Status
}

// keys returns the routing keys published since the last call.
func (m *memory) keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.published
	m.published = nil
	return out
}

// sealingEnv seals "vars#deploy": like real ciphertext, two snapshots of equal variables differ.
type sealingEnv struct{ vars string }

func (e *sealingEnv) Snapshot(_ context.Context, _, deployID string) (deploy.Snapshot, error) {
	return deploy.Snapshot{Sealed: []byte(e.vars + "#" + deployID), KeyID: "k1", For: deployID}, nil
}
func (e *sealingEnv) Same(_ context.Context, _ string, a, b deploy.Snapshot) (bool, error) {
	vars := func(s deploy.Snapshot) string {
		for i, c := range s.Sealed {
			if c == '#' {
				return string(s.Sealed[:i])
			}
		}
		return string(s.Sealed)
	}
	return vars(a) == vars(b), nil
}

// publicRegistry resolves every registry name to a public address, so no test asks DNS.
type publicRegistry struct{}

func (publicRegistry) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("140.82.112.33")}, nil
}

// world is a deploys service over memory, on a clock the test moves: account "acct" owns
// the service app "web" and the static app "site" on zone "local", on plan.
type world struct {
	t   *testing.T
	m   *memory
	svc *usecase.Service
	now time.Time
	env *sealingEnv
	seq int
}

const account = "acct"

var songbird = usecase.Plan{Name: "songbird", ConcurrentDeploys: 2, UploadBytes: 1 << 20, BuildMinutes: 20, MinScale: 1, CPU: 1}

func newWorld(t *testing.T) *world {
	w := &world{t: t, m: newMemory(), now: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC), env: &sealingEnv{vars: "A=1"}}
	w.m.plans[account] = songbird
	w.m.apps["app-web"] = usecase.App{ID: "app-web", AccountID: account, Slug: "web", Kind: "service", Zone: "local"}
	w.m.apps["app-site"] = usecase.App{ID: "app-site", AccountID: account, Slug: "site", Kind: "static", Zone: "local"}
	w.svc = usecase.New(usecase.Deps{Store: w.m, Env: w.env, Now: func() time.Time { return w.now },
		// Ids sort by creation, as UUIDv7 do.
		NewID:      func() string { w.seq++; return fmt.Sprintf("d%04d", w.seq) },
		Registries: deploy.Registries{Resolver: publicRegistry{}}})
	return w
}

// image creates an image deploy of web and fails the test on an error.
func (w *world) image(ref string) *deploy.Deploy {
	w.t.Helper()
	d, _, err := w.svc.CreateImage(context.Background(), account, "web", usecase.ImageInput{Image: ref})
	if err != nil {
		w.t.Fatal(err)
	}
	w.now = w.now.Add(time.Second)
	return d
}

// report delivers a zone's progress report on deploy id, as the bus consumer does.
func (w *world) report(id string, step zonev1.DeployStep) {
	w.t.Helper()
	err := w.m.InTx(context.Background(), func(tx usecase.Tx) error {
		return w.svc.OnProgress(context.Background(), tx, &zonev1.DeployProgress{DeployId: id, Zone: "local", Step: step})
	})
	if err != nil {
		w.t.Fatal(err)
	}
	w.now = w.now.Add(time.Second)
}

// live takes deploy id through its zone's reports until its edge serves it.
func (w *world) live(id string) {
	w.report(id, zonev1.DeployStep_DEPLOY_STEP_READY)
	w.report(id, zonev1.DeployStep_DEPLOY_STEP_ACTIVATED)
	if got := w.m.status(id); got != deploy.Live {
		w.t.Fatalf("%s is %s after its zone served it", id, got)
	}
}

// holdFromDay7 puts the account on day 7 of a payment-failure hold.
func (w *world) holdFromDay7() {
	w.m.holds[account] = deploy.Hold{Active: true, Hold: billinghold.From(w.now.Add(-7 * billinghold.Day)), Version: 1}
}
