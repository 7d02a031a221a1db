package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"tori.dev/pkg/objectstore"
	"tori.dev/tests/e2e/harness"
)

// The test that runs on a two-zone stack (harness.Options.TwoZones; docs/configuration.md, "Two zones and replicas"):
// an app of each region deploys a static site and a source service, each served by its own
// zone's edge alone, with a database made by its own zone; that database's dump is written by
// its zone to its zone's bucket and downloads through a presigned URL of that bucket (a
// pg_dump of what the app wrote). Each zone's credentials reach neither the other's rows (its
// schema) nor the other's databases, and each zone gives uids from its own range only. In the
// object store, each zone's own keys, used against the real S3 server, read its own bucket
// (the site it published, the dump it wrote) and are refused (S3's AccessDenied) listing,
// reading (the other's dump, by its key) and writing the other zone's bucket, and the same on
// deploys' artifacts bucket.
func TestAppsOfEachRegionRunInTheirOwnZone(t *testing.T) {
	s := harness.Start(t, harness.Options{TwoZones: true, Env: map[string]string{"AUTH_LIMIT_PER_15MIN": "100000"}})
	// An account of each region (the free plan has one service app).
	accounts := map[string]harness.Account{"eu": s.NewAccount(t, "zones-eu"), "us": s.NewAccount(t, "zones-us")}
	zoneOf := map[string]string{"eu": harness.FirstZone, "us": harness.SecondZone}
	other := map[string]string{"eu": "us", "us": "eu"}
	process := map[string]string{"eu": "zoneagent", "us": "zoneagent-" + harness.SecondZone}

	type placed struct {
		static, service string
		database        string // its name on the zone's cluster
		databaseID      string
		deploys         map[string]map[string]any // kind ("static", "source"): the deploy as created
		dump            map[string]any            // the database's dump as the API lists it
	}
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
		p.databaseID = s.Get(t, "/api/apps/"+p.service+"/database", a.Token).Map(t)["id"].(string)
		p.database = "db_" + strings.ReplaceAll(p.databaseID, "-", "")
		p.deploys = map[string]map[string]any{}
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
			apps[region].deploys[kind] = r.Map(t)
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

	// Each database dumped on request by its own zone, into its zone's bucket, and downloaded
	// through a presigned URL of that bucket: a pg_dump of the table the app wrote to.
	for _, region := range []string{"eu", "us"} {
		p, a := apps[region], accounts[region]
		p.dump = takeDump(t, s, a.Token, p.service)
		apps[region] = p
		bucket := s.Credentials(process[region])["ZONEAGENT_OBJECT_STORE_BUCKET"]
		if bucket != "tori-zone-"+zoneOf[region] {
			t.Fatalf("zone %s's bucket is %q", zoneOf[region], bucket)
		}
		link := dumpLink(t, s, "/api/apps/"+p.service+"/database/dumps/"+p.dump["id"].(string)+"/download", a.Token)
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		if want := "/" + bucket + "/dumps/" + p.databaseID + "/" + p.dump["id"].(string) + ".dump"; u.Path != want || u.Query().Get("X-Amz-Signature") == "" {
			t.Fatalf("the %s dump downloads from %s, want a presigned URL of %s", region, u.Path, want)
		}
		code, body := getWithoutCredentials(t, link)
		if code != http.StatusOK || int64(len(body)) != int64(p.dump["sizeBytes"].(float64)) {
			t.Fatalf("the %s dump's download: %d, %d bytes of %v", region, code, len(body), p.dump["sizeBytes"])
		}
		if rows := restoredNotes(t, body); rows != 1 {
			t.Fatalf("the %s dump restores %d of the app's notes, want 1", region, rows)
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
		// Nor its own zone's: it works from the maintenance database alone, and never
		// connects into a customer's (docs/tenants-managed-databases.md).
		prov.Path = "/" + p.database
		if c, err := pgx.Connect(ctx, prov.String()); err == nil {
			c.Close(ctx)
			t.Fatalf("zone %s's provisioning role opened its own zone's database %s", zoneOf[region], p.database)
		}
		prov.Path = "/postgres"
		c, err := pgx.Connect(ctx, prov.String())
		if err != nil {
			t.Fatalf("zone %s's provisioning role and the maintenance database: %v", zoneOf[region], err)
		}
		c.Close(ctx)
	}

	// The object store, with each zone's own keys against the real S3 server: its own bucket
	// is readable, the other zone's and deploys' are not, whatever the operation.
	artifacts := rootBucket(t, s, harness.ArtifactsBucket)
	for _, region := range []string{"eu", "us"} {
		p, q := apps[region], apps[other[region]]
		creds := s.Credentials(process[region])
		own, theirs := creds["ZONEAGENT_OBJECT_STORE_BUCKET"], s.Credentials(process[other[region]])["ZONEAGENT_OBJECT_STORE_BUCKET"]
		zone := s3As(t, creds["OBJECT_STORE_URL"], creds["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"], creds["ZONEAGENT_OBJECT_STORE_SECRET_KEY"])

		static := p.deploys["static"]
		manifest, err := readObject(ctx, zone, own, "sites/"+static["appId"].(string)+"/"+static["id"].(string)+"/manifest.json")
		if err != nil || !strings.Contains(string(manifest), `"index.html"`) {
			t.Fatalf("zone %s reading its site's manifest in %s: %v %s", zoneOf[region], own, err, manifest)
		}
		dumpKey := func(p placed) string { return "dumps/" + p.databaseID + "/" + p.dump["id"].(string) + ".dump" }
		if b, err := readObject(ctx, zone, own, dumpKey(p)); err != nil || int64(len(b)) != int64(p.dump["sizeBytes"].(float64)) {
			t.Fatalf("zone %s reading its dump in %s: %v (%d bytes)", zoneOf[region], own, err, len(b))
		}

		// The targets exist (their owners read them), so a refusal is not a missing object.
		artifactKey := "artifacts/" + static["appId"].(string) + "/" + static["id"].(string) + ".tar"
		if _, err := artifacts.Head(ctx, artifactKey); err != nil {
			t.Fatalf("the %s static deploy's artifact %s: %v", region, artifactKey, err)
		}
		for _, target := range []struct{ bucket, key string }{{theirs, dumpKey(q)}, {harness.ArtifactsBucket, artifactKey}} {
			planted := "planted-by-" + zoneOf[region]
			for what, err := range map[string]error{
				"lists":  listFirst(ctx, zone, target.bucket),
				"reads":  func() error { _, err := readObject(ctx, zone, target.bucket, target.key); return err }(),
				"writes": putSmall(ctx, zone, target.bucket, planted),
			} {
				if code := s3Code(err); code != "AccessDenied" {
					t.Errorf("zone %s %s in %s: S3 code %q (%v), want AccessDenied", zoneOf[region], what, target.bucket, code, err)
				}
			}
			if _, err := rootBucket(t, s, target.bucket).Head(ctx, planted); !errors.Is(err, objectstore.ErrNotFound) {
				t.Errorf("zone %s's planted object in %s: %v, want none", zoneOf[region], target.bucket, err)
			}
		}
	}
}

// s3As is the stack's S3 server seen with one holder's own keys through minio-go itself, not
// the services' objectstore package: what it is refused is the server's own answer.
func s3As(t *testing.T, endpoint, accessKey, secretKey string) *minio.Client {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(accessKey, secretKey, ""),
		Secure:       u.Scheme == "https",
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// s3Code is the S3 error code err carries ("" for none).
func s3Code(err error) string { return minio.ToErrorResponse(err).Code }

// readObject GETs the whole object.
func readObject(ctx context.Context, c *minio.Client, bucket, key string) ([]byte, error) {
	o, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return io.ReadAll(o)
}

// listFirst lists bucket as far as its first key: the error the listing met, nil if none.
func listFirst(ctx context.Context, c *minio.Client, bucket string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true, MaxKeys: 1}) {
		return o.Err
	}
	return nil
}

// putSmall writes a one-byte object under key.
func putSmall(ctx context.Context, c *minio.Client, bucket, key string) error {
	_, err := c.PutObject(ctx, bucket, key, strings.NewReader("x"), 1, minio.PutObjectOptions{})
	return err
}
