package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/tests/e2e/harness"
)

// The control plane's part of issue 41's world. Accounts are signed in through the API (each
// one real to every service that keeps a copy: identity, billing, and the plan copies of
// apps, deploys and logs) and apps are created through POST /api/apps, so every copy of an app
// (deploys, logs, identity, the zone's) comes the real way, by its events. What the API
// would take hours for goes into the services' own tables through one admin connection:
// each app's deploy history (deploys' schema, and the apps service's current deploy) and
// its log entries (the logs service's day partitions, by COPY).

const (
	cpStateKey = "controlPlane"
	cpHeavy    = 0 // w.heavy: the account whose GET /api/apps is measured
	// cpActors accounts after the heavy one act for the measured writes (POST /api/apps,
	// POST .../deploys), in turn, so no account's window of the contract's rate limits is
	// reached; each owns one Measured app (real deploys only) and no seeded app.
	cpActors     = 4
	cpAPIWorkers = 8 // requests at once while seeding
)

// cpPlan is a plan's limits that decide which one an account needs.
type cpPlan struct {
	name          string
	apps, domains int
}

// cpPlans is docs/conventions.md's catalog in the two limits the seed fills, smallest first.
var cpPlans = []cpPlan{{"nestling", 3, 0}, {"songbird", 10, 5}, {"flock", 50, 50}}

// cpState is what the control plane's seed keeps between sizes (in scaleWorld.extra).
type cpState struct {
	db      *pgxpool.Pool
	api     *scaleClient
	run     string      // this run's tag in names (slugs, emails, hostnames)
	plan    map[int]int // account index → index in cpPlans it is on
	hosts   map[int]int // account index → custom hostnames its apps hold
	owned   map[int]int // account index → apps it owns
	logsApp int         // index in w.apps of the app GET .../logs reads (many entries)
	// retentionApp is the app read during measureRetention: another account's, so its reads
	// count against another account's window than measureAPI's.
	retentionApp int
	oldDays      []time.Time // detached days of log entries past retention, retentionDrops per round
	nextOld      int         // how many old days have been seeded so far
	template     string      // the artifact key every seeded static deploy serves (a real deploy's)
	// nextOwner counts the apps given to the owners (the accounts after the acting ones), who
	// take them in turn.
	nextOwner int
}

func cp(w *scaleWorld) *cpState {
	st, _ := w.extra[cpStateKey].(*cpState)
	return st
}

// seedControlPlane grows w to size apps (and cfg.accounts accounts) in the control plane.
func seedControlPlane(b *testing.B, s *harness.Stack, w *scaleWorld, size int) {
	b.Helper()
	ctx := context.Background()
	if w.extra == nil {
		w.extra = map[string]any{}
	}
	st := cp(w)
	if st == nil {
		st = startControlPlane(b, ctx, s, w)
	}
	before := len(w.apps)
	if size <= before {
		return
	}
	step := time.Now()
	plans := assignApps(w, st, size)
	hosts := assignHostnames(w, st, size)
	if err := upgradePlans(ctx, s, w, st, plans, hosts); err != nil {
		b.Fatalf("seed: plans: %v", err)
	}
	b.Logf("seed: plans ready in %s", time.Since(step).Round(time.Millisecond))
	step = time.Now()
	if err := createApps(ctx, w, st, before, size); err != nil {
		b.Fatalf("seed: apps: %v", err)
	}
	b.Logf("seed: %d apps created through the API in %s", size-before, time.Since(step).Round(time.Millisecond))
	step = time.Now()
	if err := awaitAppCopies(ctx, w, st, before); err != nil {
		b.Fatalf("seed: app copies: %v", err)
	}
	b.Logf("seed: deploys' and logs' copies of the apps in %s", time.Since(step).Round(time.Millisecond))
	step = time.Now()
	n, err := seedDeploys(ctx, w, st, before)
	if err != nil {
		b.Fatalf("seed: deploys: %v", err)
	}
	b.Logf("seed: %d deploys in %s", n, time.Since(step).Round(time.Millisecond))
	if seeded := seededApps(w, before); len(seeded) > 0 {
		for _, i := range []int{seeded[0], seeded[len(seeded)-1]} {
			if err := checkSeededHistory(ctx, w, st, i); err != nil {
				b.Fatalf("seed: the API disagrees with the seeded history: %v", err)
			}
		}
	}
	step = time.Now()
	if err := addHostnames(ctx, w, st, hosts); err != nil {
		b.Fatalf("seed: hostnames: %v", err)
	}
	b.Logf("seed: %d custom hostnames through the API in %s", len(hosts), time.Since(step).Round(time.Millisecond))
	step = time.Now()
	n, err = seedLogs(ctx, w, st, before)
	if err != nil {
		b.Fatalf("seed: log entries: %v", err)
	}
	b.Logf("seed: %d log entries in %s", n, time.Since(step).Round(time.Millisecond))
	step = time.Now()
	n, err = seedOldDays(ctx, w, st)
	if err != nil {
		b.Fatalf("seed: days past retention: %v", err)
	}
	b.Logf("seed: %d days past retention (%d entries) in %s", w.cfg.rounds*retentionDrops, n, time.Since(step).Round(time.Millisecond))
}

// startControlPlane signs every account in through the API, puts the heavy and the acting
// accounts on flock, and gives the heavy account its measured apps, each with a real deploy.
func startControlPlane(b *testing.B, ctx context.Context, s *harness.Stack, w *scaleWorld) *cpState {
	b.Helper()
	if w.cfg.accounts < cpActors+2 {
		b.Fatalf("SCALE_BENCH_ACCOUNTS=%d: want at least %d (the heavy account, %d acting ones, an owner)", w.cfg.accounts, cpActors+2, cpActors)
	}
	db, err := pgxpool.New(ctx, s.Env["DATABASE_URL"])
	if err != nil {
		b.Fatalf("seed: admin connection: %v", err)
	}
	b.Cleanup(db.Close)
	st := &cpState{db: db, api: newScaleClient(s.Gateway), run: harness.Hex(3), plan: map[int]int{}, hosts: map[int]int{},
		owned: map[int]int{}, logsApp: -1, retentionApp: -1}
	w.extra[cpStateKey] = st
	w.heavy = cpHeavy

	start := time.Now()
	w.accounts = make([]scaleAccount, w.cfg.accounts)
	err = inParallel(ctx, len(w.accounts), cpAPIWorkers, func(ctx context.Context, i int) error {
		email := fmt.Sprintf("scale-%05d-%s@example.test", i, st.run)
		token, err := st.api.signIn(ctx, s, email, i)
		w.accounts[i] = scaleAccount{Email: email, Token: token}
		return err
	})
	if err != nil {
		b.Fatalf("seed: sign in: %v", err)
	}
	if err := accountIDs(ctx, st.db, w); err != nil {
		b.Fatalf("seed: %v", err)
	}
	b.Logf("seed: %d accounts signed in through the API in %s", len(w.accounts), time.Since(start).Round(time.Millisecond))

	flock, onFlock := map[int]int{}, []int{}
	for i := range cpActors + 1 {
		flock[i], onFlock = len(cpPlans)-1, append(onFlock, i)
	}
	if err := setPlans(ctx, s, w, st, onFlock, "flock"); err != nil {
		b.Fatalf("seed: %v", err)
	}
	for i, p := range flock {
		st.plan[i] = p
	}
	if err := awaitPlanCopies(ctx, st.db, w, flock); err != nil {
		b.Fatalf("seed: %v", err)
	}
	for actor := 1; actor <= cpActors; actor++ {
		app := scaleApp{Account: actor, Kind: "static", Measured: true}
		app.ID, app.Slug, err = st.api.createApp(ctx, w.accounts[actor].Token, fmt.Sprintf("scm%d-%s", actor, st.run), app.Kind)
		if err != nil {
			b.Fatalf("seed: measured app: %v", err)
		}
		id, err := st.api.deployStatic(ctx, w.accounts[actor].Token, app.Slug, "measured "+app.Slug)
		if err != nil {
			b.Fatalf("seed: measured app's deploy: %v", err)
		}
		if err := awaitDeployInDB(ctx, st.db, id, 2*time.Minute); err != nil {
			b.Fatalf("seed: %v", err)
		}
		app.DeployIDs = []string{id}
		w.apps = append(w.apps, app)
		st.owned[actor]++
	}
	// Every seeded static deploy serves what the first measured deploy uploaded: an artifact
	// the deploys service really stored, so the zone's seed has a real one to put live.
	if err := st.db.QueryRow(ctx, `SELECT artifact_key FROM deploys.deploys WHERE id = $1`, w.apps[0].liveDeploy()).Scan(&st.template); err != nil {
		b.Fatalf("seed: the measured deploy's artifact: %v", err)
	}
	// For the zone's seed: what the seeded static deploys (kind static) serve. A seeded
	// service's deploys are kind source with no artifact (its image is made on first wake).
	w.extra["staticArtifactKey"] = st.template
	return st
}

// accountIDs reads each account's id from identity's users.
func accountIDs(ctx context.Context, db *pgxpool.Pool, w *scaleWorld) error {
	emails := make([]string, len(w.accounts))
	for i, a := range w.accounts {
		emails[i] = a.Email
	}
	rows, err := db.Query(ctx, `SELECT email, account_id::text FROM identity.users WHERE email = ANY($1)`, emails)
	if err != nil {
		return fmt.Errorf("account ids: %w", err)
	}
	ids := map[string]string{}
	for rows.Next() {
		var email, id string
		if err := rows.Scan(&email, &id); err != nil {
			return err
		}
		ids[email] = id
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range w.accounts {
		if w.accounts[i].ID = ids[w.accounts[i].Email]; w.accounts[i].ID == "" {
			return fmt.Errorf("account ids: identity has no user %s", w.accounts[i].Email)
		}
	}
	return nil
}

// assignApps appends the apps of the next size to w (not yet created) and returns the plan
// each account needs for its apps: the heavy account's until it has cfg.heavyAccountApps,
// then the other owners' in turn; a tenth of them services.
func assignApps(w *scaleWorld, st *cpState, size int) map[int]int {
	owners := w.cfg.accounts - 1 - cpActors
	for i := len(w.apps); i < size; i++ {
		account := cpHeavy
		if st.owned[cpHeavy] >= w.cfg.heavyAccountApps {
			account = 1 + cpActors + st.nextOwner%owners
			st.nextOwner++
		}
		kind := "static"
		if i%10 == 10-w.cfg.servicesPerTenApp {
			kind = "service"
		}
		w.apps = append(w.apps, scaleApp{Account: account, Kind: kind})
		st.owned[account]++
		switch {
		case st.logsApp < 0 && account == cpHeavy && kind == "static":
			st.logsApp = i
		case st.retentionApp < 0 && account == 1+cpActors && kind == "static":
			st.retentionApp = i
		}
	}
	need := map[int]int{}
	for account, n := range st.owned {
		need[account] = planFor(n, 0)
	}
	return need
}

// assignHostnames picks the static apps (hostnames serve static apps only) that get the
// size's custom hostnames (5 per hundred): the
// heavy account's apps first, then one per app of the other owners, at most 5 per account
// (songbird's limit). It returns the app index → hostname of the new ones.
func assignHostnames(w *scaleWorld, st *cpState, size int) map[int]string {
	want := size * w.cfg.hostnamesPerCent / 100
	have := 0
	for _, a := range w.apps {
		have += len(a.Hostnames)
	}
	out := map[int]string{}
	for i := 0; i < len(w.apps) && have < want; i++ {
		a := w.apps[i]
		if a.Measured || a.Kind != "static" || len(a.Hostnames) > 0 || (a.Account != cpHeavy && st.hosts[a.Account] >= cpPlans[1].domains) {
			continue
		}
		out[i] = fmt.Sprintf("h%05d-%s.example.com", i, st.run)
		st.hosts[a.Account]++
		have++
	}
	return out
}

// planFor is the smallest plan with room for apps and domains.
func planFor(apps, domains int) int {
	for i, p := range cpPlans {
		if apps <= p.apps && domains <= p.domains {
			return i
		}
	}
	return len(cpPlans) - 1
}

// upgradePlans moves every account that needs more room (for its apps or its hostnames) to
// that plan as billing's operator command would (setPlans), and waits until the apps and
// deploys services have the new plan.
func upgradePlans(ctx context.Context, s *harness.Stack, w *scaleWorld, st *cpState, need map[int]int, hosts map[int]string) error {
	for i := range hosts {
		a := w.apps[i].Account
		need[a] = max(need[a], planFor(st.owned[a], st.hosts[a]))
	}
	var moves []int
	for account, p := range need {
		if p > st.plan[account] {
			moves = append(moves, account)
		}
	}
	byPlan := map[int][]int{}
	for _, a := range moves {
		byPlan[need[a]] = append(byPlan[need[a]], a)
	}
	for p, accounts := range byPlan {
		if err := setPlans(ctx, s, w, st, accounts, cpPlans[p].name); err != nil {
			return err
		}
	}
	moved := map[int]int{}
	for _, a := range moves {
		st.plan[a], moved[a] = need[a], need[a]
	}
	return awaitPlanCopies(ctx, st.db, w, moved)
}

// awaitPlanCopies waits until the apps and deploys services hold each account's plan.
func awaitPlanCopies(ctx context.Context, db *pgxpool.Pool, w *scaleWorld, plans map[int]int) error {
	ids, names := make([]string, 0, len(plans)), make([]string, 0, len(plans))
	for a, p := range plans {
		ids, names = append(ids, w.accounts[a].ID), append(names, cpPlans[p].name)
	}
	return awaitCount(ctx, db, len(ids), 2*time.Minute, "plan copies", `
		SELECT least(
			(SELECT count(*) FROM apps.accounts a JOIN unnest($1::text[], $2::text[]) u(id, plan) ON a.account_id = u.id AND a.plan = u.plan),
			(SELECT count(*) FROM deploys.plans p JOIN unnest($1::text[], $2::text[]) u(id, plan) ON p.account_id = u.id AND p.plan = u.plan))`,
		ids, names)
}

// awaitCount polls query (one count) until it reaches want.
func awaitCount(ctx context.Context, db *pgxpool.Pool, want int, timeout time.Duration, what, query string, args ...any) error {
	deadline := time.Now().Add(timeout)
	var n int
	for {
		if err := db.QueryRow(ctx, query, args...).Scan(&n); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if n >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d of %d after %s", what, n, want, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createApps creates apps [from, to) of w through POST /api/apps, each as its owner.
func createApps(ctx context.Context, w *scaleWorld, st *cpState, from, to int) error {
	var mu sync.Mutex
	return inParallel(ctx, to-from, cpAPIWorkers, func(ctx context.Context, k int) error {
		i := from + k
		mu.Lock()
		a := w.apps[i]
		mu.Unlock()
		st.api.pace.wait(w.accounts[a.Account].Token, "POST /api/apps", paceWrites)
		id, slug, err := st.api.createApp(ctx, w.accounts[a.Account].Token, fmt.Sprintf("sc%05d-%s", i, st.run), a.Kind)
		if err != nil {
			return err
		}
		mu.Lock()
		w.apps[i].ID, w.apps[i].Slug = id, slug
		mu.Unlock()
		return nil
	})
}

func (c *scaleClient) createApp(ctx context.Context, token, name, kind string) (id, slug string, err error) {
	body := map[string]string{"kind": kind}
	if name != "" {
		body["name"] = name
	}
	raw, err := c.call(ctx, http.MethodPost, "/api/apps", token, body, "", http.StatusCreated)
	if err != nil {
		return "", "", err
	}
	var v struct{ ID, Slug string }
	if err := json.Unmarshal(raw, &v); err != nil || v.ID == "" {
		return "", "", fmt.Errorf("create app: no id in %s", truncate(string(raw), 200))
	}
	return v.ID, v.Slug, nil
}

// deployStatic uploads a one-page static site and returns the deploy's id.
func (c *scaleClient) deployStatic(ctx context.Context, token, slug, page string) (string, error) {
	ct, body := multipartBody("files", []sitePart{{"index.html", page}})
	raw, err := c.call(ctx, http.MethodPost, "/api/apps/"+slug+"/deploys", token, body, ct, http.StatusCreated)
	if err != nil {
		return "", err
	}
	var v struct{ ID string }
	if err := json.Unmarshal(raw, &v); err != nil || v.ID == "" {
		return "", fmt.Errorf("deploy: no id in %s", truncate(string(raw), 200))
	}
	return v.ID, nil
}

// awaitDeployInDB waits until the deploys service has put the deploy live (read in its
// table: polling the API would spend the account's window of reads).
func awaitDeployInDB(ctx context.Context, db *pgxpool.Pool, id string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		status, err := deployStatusInDB(ctx, db, id)
		if err != nil {
			return err
		}
		switch {
		case status == "live":
			return nil
		case status != "building" && status != "releasing":
			return fmt.Errorf("deploy %s ended %s, want live", id, status)
		case time.Now().After(deadline):
			return fmt.Errorf("deploy %s still %s after %s", id, status, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func deployStatusInDB(ctx context.Context, db *pgxpool.Pool, id string) (string, error) {
	var status string
	if err := db.QueryRow(ctx, `SELECT status FROM deploys.deploys WHERE id = $1`, id).Scan(&status); err != nil {
		return "", fmt.Errorf("deploy %s: %w", id, err)
	}
	return status, nil
}

// awaitAppCopies waits until the deploys and logs services have recorded every app from
// index from on (apps.app.created), which the seeded deploys and entries belong to.
func awaitAppCopies(ctx context.Context, w *scaleWorld, st *cpState, from int) error {
	ids := make([]string, 0, len(w.apps)-from)
	for _, a := range w.apps[from:] {
		ids = append(ids, a.ID)
	}
	return awaitCount(ctx, st.db, len(ids), 5*time.Minute, "deploys' and logs' copies of the apps", `
		SELECT least(
			(SELECT count(*) FROM deploys.apps WHERE id = ANY($1::text[])),
			(SELECT count(*) FROM logs.apps WHERE app_id = ANY($1::uuid[]) AND deleted_at IS NULL))`, ids)
}

// addHostnames claims each hostname on its app through POST .../domains. They stay pending
// (no DNS record proves them in the bench), as most of a real host's new claims are.
func addHostnames(ctx context.Context, w *scaleWorld, st *cpState, hosts map[int]string) error {
	apps := make([]int, 0, len(hosts))
	for i := range hosts {
		apps = append(apps, i)
	}
	var mu sync.Mutex
	return inParallel(ctx, len(apps), 4, func(ctx context.Context, k int) error {
		i := apps[k]
		mu.Lock()
		a := w.apps[i]
		mu.Unlock()
		st.api.pace.wait(w.accounts[a.Account].Token, "POST /api/apps/{slug}/domains", paceWrites)
		_, err := st.api.call(ctx, http.MethodPost, "/api/apps/"+a.Slug+"/domains", w.accounts[a.Account].Token,
			map[string]string{"hostname": hosts[i]}, "", http.StatusCreated)
		if err != nil {
			return err
		}
		mu.Lock()
		w.apps[i].Hostnames = append(w.apps[i].Hostnames, hosts[i])
		mu.Unlock()
		return nil
	})
}

// seededApps are the indexes from from on of the apps whose history is seeded (not Measured).
func seededApps(w *scaleWorld, from int) []int {
	var out []int
	for i := from; i < len(w.apps); i++ {
		if !w.apps[i].Measured {
			out = append(out, i)
		}
	}
	return out
}
