package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/tests/e2e/harness"
)

// The test that runs on a two-zone stack (harness.Options.TwoZones; README, "Two zones"):
// an app of each region deploys a static site and a source service, each served by its own
// zone's edge alone, with a database made by its own zone; each zone's credentials reach
// neither the other's rows (its schema) nor the other's databases, and each zone gives uids
// from its own range only. It holds whether artifacts are files or objects in the store.
func TestAppsOfEachRegionRunInTheirOwnZone(t *testing.T) {
	s := harness.Start(t, harness.Options{TwoZones: true, Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000"}})
	// An account of each region (the free plan has one service app).
	accounts := map[string]harness.Account{"eu": s.NewAccount(t, "zones-eu"), "us": s.NewAccount(t, "zones-us")}
	zoneOf := map[string]string{"eu": harness.FirstZone, "us": harness.SecondZone}
	other := map[string]string{"eu": "us", "us": "eu"}
	process := map[string]string{"eu": "zoneagent", "us": "zoneagent-" + harness.SecondZone}

	type placed struct{ static, service, database string }
	apps := map[string]placed{}
	for _, region := range []string{"eu", "us"} {
		a := accounts[region]
		var p placed
		for _, kind := range []string{"static", "service"} {
			r := post(s, t, "/api/apps", a.Token, map[string]string{"kind": kind, "region": region})
			if r.Status != http.StatusCreated {
				t.Fatalf("create %s app in %s: %d %s", kind, region, r.Status, r.Body)
			}
			if m := r.Map(t); m["region"] != region || m["zone"] != zoneOf[region] {
				t.Fatalf("a %s app of region %s: %s", kind, region, r.Body)
			}
			if kind == "static" {
				p.static = r.Map(t)["slug"].(string)
			} else {
				p.service = r.Map(t)["slug"].(string)
			}
		}
		// The database first, so the source deploy's snapshot holds its DATABASE_URL.
		if r := post(s, t, "/api/apps/"+p.service+"/database", a.Token, nil); r.Status != http.StatusAccepted {
			t.Fatalf("create database in %s: %d %s", region, r.Status, r.Body)
		}
		apps[region] = p
	}
	for region, p := range apps {
		a := accounts[region]
		harness.Eventually(t, 60*time.Second, "the "+region+" database ready with its variable", func() bool {
			r := s.Get(t, "/api/apps/"+p.service+"/database", a.Token)
			if r.Status != http.StatusOK || r.Map(t)["status"] == "failed" {
				t.Fatalf("%s database: %d %s", region, r.Status, r.Body)
			}
			_, ok := envValue(t, s, a.Token, p.service, "DATABASE_URL")
			return r.Map(t)["status"] == "ready" && ok
		})
		p.database = "db_" + strings.ReplaceAll(s.Get(t, "/api/apps/"+p.service+"/database", a.Token).Map(t)["id"].(string), "-", "")
		apps[region] = p
	}

	// Both regions deploy at once (a plan has one deploy under way): each zone takes only its
	// own commands.
	start, _ := json.Marshal(map[string]string{"start": "python3 server.py"})
	for _, kind := range []string{"static", "source"} {
		deploys := map[string]string{}
		for region, p := range apps {
			a := accounts[region]
			var r *harness.Response
			if kind == "static" {
				r = deployFiles(t, s, a.Token, p.static, sitePart{"index.html", "static in " + region})
			} else {
				r = deploySource(t, s, a.Token, p.service, sourceTarball(t, map[string]string{"tori.json": string(start), "server.py": dbAppPy}), "")
			}
			if r.Status != http.StatusCreated {
				t.Fatalf("%s deploy in %s: %d %s", kind, region, r.Status, r.Body)
			}
			deploys[region] = r.Map(t)["id"].(string)
		}
		for region, p := range apps {
			slug := p.static
			if kind == "source" {
				slug = p.service
			}
			waitStatus(t, s, accounts[region].Token, slug, deploys[region], "live")
		}
	}

	for region, p := range apps {
		own, elsewhere := s.Zone(region), s.Zone(other[region])
		if status, body := edgeGet(t, own, p.static, "/"); status != http.StatusOK || body != "static in "+region {
			t.Fatalf("%s static site at its zone's edge: %d %q", region, status, body)
		}
		// The app through its own zone's pooler: written and read in its database.
		status, body := edgeGet(t, own, p.service, "/write")
		var w map[string]any
		if status != http.StatusOK || json.Unmarshal([]byte(body), &w) != nil || w["rc"] != float64(0) || w["out"] != "1" {
			t.Fatalf("%s service writing to its database: %d %s", region, status, body)
		}
		// The other zone's edge serves neither of them.
		for _, slug := range []string{p.static, p.service} {
			if status, body := edgeGet(t, elsewhere, slug, "/"); status != http.StatusNotFound {
				t.Fatalf("the %s edge serves %s of region %s: %d %q", other[region], slug, region, status, body)
			}
		}
	}

	ctx := context.Background()
	admin, err := pgx.Connect(ctx, s.Env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for region, p := range apps {
		schema := "zoneagent_" + strings.ReplaceAll(zoneOf[region], "-", "_")
		otherSchema := "zoneagent_" + strings.ReplaceAll(zoneOf[other[region]], "-", "_")
		// Each zone's record holds its own apps' revisions and no other's.
		var mine, theirs int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.revisions WHERE slug = ANY($1)`, []string{p.static, p.service}).Scan(&mine); err != nil {
			t.Fatal(err)
		}
		q := apps[other[region]]
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.revisions WHERE slug = ANY($1)`, []string{q.static, q.service}).Scan(&theirs); err != nil {
			t.Fatal(err)
		}
		if mine != 2 || theirs != 0 {
			t.Fatalf("zone %s records %d revisions of its apps (want 2) and %d of the other zone's", zoneOf[region], mine, theirs)
		}
		// Its service's uid is from its own range.
		var uid int64
		if err := admin.QueryRow(ctx, `SELECT u.uid FROM `+schema+`.app_uids u JOIN `+schema+`.revisions r ON r.app_id = u.app_id WHERE r.slug = $1 LIMIT 1`, p.service).Scan(&uid); err != nil {
			t.Fatalf("%s service's uid: %v", region, err)
		}
		lo, _ := strconv.ParseInt(s.Zone(region).Env["ZONE_APP_UID_BASE"], 10, 64)
		n, _ := strconv.ParseInt(s.Zone(region).Env["ZONE_APP_UID_COUNT"], 10, 64)
		if uid <= lo || uid >= lo+n {
			t.Fatalf("%s service runs as uid %d, outside its zone's %d-%d", region, uid, lo+1, lo+n-1)
		}

		// The zone's own credentials: its role reads its schema and not the other zone's;
		// its provisioning role cannot open the other zone's database.
		creds := s.Credentials(process[region])
		zc, err := pgx.Connect(ctx, creds["ZONEAGENT_DATABASE_URL"])
		if err != nil {
			t.Fatal(err)
		}
		var n2 int
		if err := zc.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.revisions`).Scan(&n2); err != nil {
			t.Fatalf("zone %s reading its own record: %v", zoneOf[region], err)
		}
		if err := zc.QueryRow(ctx, `SELECT count(*) FROM `+otherSchema+`.revisions`).Scan(&n2); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("zone %s read zone %s's record: %v", zoneOf[region], zoneOf[other[region]], err)
		}
		zc.Close(ctx)
		prov, err := url.Parse(creds["ZONE_POSTGRES_ADMIN_URL"])
		if err != nil {
			t.Fatal(err)
		}
		prov.Path = "/" + q.database
		if c, err := pgx.Connect(ctx, prov.String()); err == nil {
			c.Close(ctx)
			t.Fatalf("zone %s's provisioning role opened zone %s's database %s", zoneOf[region], zoneOf[other[region]], q.database)
		}
		prov.Path = "/" + p.database
		c, err := pgx.Connect(ctx, prov.String())
		if err != nil {
			t.Fatalf("zone %s's provisioning role and its own database %s: %v", zoneOf[region], p.database, err)
		}
		c.Close(ctx)
	}
}
