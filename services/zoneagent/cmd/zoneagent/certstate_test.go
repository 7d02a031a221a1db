package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/testinfra"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// certificateEvents reads the zone.app.certificate_changed events in the zone's outbox for host,
// oldest first.
func certificateEvents(t *testing.T, pool *pgxpool.Pool, host string) []*zonev1.CertificateChanged {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY id`, zonebus.KeyCertificateChanged)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []*zonev1.CertificateChanged
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			t.Fatal(err)
		}
		var ev zonev1.CertificateChanged
		if err := proto.Unmarshal(body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.GetHostname() == host {
			out = append(out, &ev)
		}
	}
	return out
}

// An active custom hostname's certificate is ordered ahead of any visitor, validated for real
// by Pebble (HTTP-01 against the edge), and its state reaches the outbox: pending, then issued
// with the certificate's end. A hostname whose DNS points where no edge listens fails
// validation: failed, with the CA's reason.
func TestCustomHostnameCertificateStates(t *testing.T) {
	plain, secure := testinfra.FreeAddr(t), testinfra.FreeAddr(t)
	_, hp, _ := net.SplitHostPort(plain)
	_, tp, _ := net.SplitHostPort(secure)
	httpPort, _ := strconv.Atoi(hp)
	tlsPort, _ := strconv.Atoi(tp)
	pebble := testinfra.StartPebbleValidating(t, 24*time.Hour, httpPort, tlsPort)
	pebble.SetA(t, "broken.example.test", "127.0.0.9")

	cfg := acmeConfig(pebble, time.Minute, "http-01")
	cfg.EdgeAddr, cfg.TLSAddr = plain, secure
	cfg.StorageKey, cfg.EdgeMaxConnsPerIP, cfg.DataDir, cfg.Zone = testTLSKey, 64, t.TempDir(), "local"
	pool := storetest.NewPool(t)
	st := store.New(pool)
	if err := st.InTx(context.Background(), func(tx usecase.Tx) error { return tx.SetAppAccount(context.Background(), "app1", "acct1") }); err != nil {
		t.Fatal(err)
	}
	table := edge.NewTable()
	// The zone's sites in its bucket (nothing is published: the certificates are what is tested).
	env := testinfra.StartObjectStore(t).ZoneObjectStoreEnv(t, "local")
	cfg.ObjectStoreURL, cfg.ObjectStoreAccess = env["OBJECT_STORE_URL"], env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"]
	cfg.ObjectStoreSecret, cfg.ObjectStoreBucket, cfg.CacheBytes = env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], env["ZONEAGENT_OBJECT_STORE_BUCKET"], 16<<20
	_, siteCache, err := openSites(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &edge.Edge{Domain: "apps.test", Sites: siteCache, Table: table}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	es, err := listenEdge(cfg, pool, e, &certificateStates{zone: "local", edge: e, store: st, log: log}, log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- es.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		es.Shutdown(ctx)
		<-done
	})

	table.Replace([]edge.Route{{AppID: "app1", Slug: "site", DeployID: "d1", Kind: revision.KindStatic}},
		map[string]string{"shop.example.test": "app1", "broken.example.test": "app1"})
	es.certs.Keep(table.Hosts())

	testinfra.Eventually(t, 60*time.Second, "shop.example.test issued", func() bool {
		evs := certificateEvents(t, pool, "shop.example.test")
		return len(evs) > 0 && evs[len(evs)-1].GetStatus() == zonev1.CertificateStatus_CERTIFICATE_STATUS_ISSUED
	})
	evs := certificateEvents(t, pool, "shop.example.test")
	if evs[0].GetStatus() != zonev1.CertificateStatus_CERTIFICATE_STATUS_PENDING {
		t.Fatalf("first state %v, want pending", evs[0].GetStatus())
	}
	issued := evs[len(evs)-1]
	leaf, err := (&tlsEdge{cfg: cfg}).handshake("shop.example.test", pebble.Roots)
	if err != nil {
		t.Fatal(err)
	}
	if !issued.GetExpiresAt().AsTime().Equal(leaf.NotAfter) || issued.GetAppId() != "app1" || issued.GetZone() != "local" || issued.GetLastError() != "" {
		t.Fatalf("issued %v, served certificate ends %v", issued, leaf.NotAfter)
	}

	testinfra.Eventually(t, 60*time.Second, "broken.example.test failed", func() bool {
		evs := certificateEvents(t, pool, "broken.example.test")
		return len(evs) > 0 && evs[len(evs)-1].GetStatus() == zonev1.CertificateStatus_CERTIFICATE_STATUS_FAILED
	})
	failed := certificateEvents(t, pool, "broken.example.test")
	last := failed[len(failed)-1]
	if last.GetLastError() == "" || last.GetExpiresAt() != nil {
		t.Fatalf("failed state %v: want a reason and no end", last)
	}
	t.Logf("failed with %q", last.GetLastError())
	// The app's own hostname is not a custom one: no state is published for it.
	if n := len(certificateEvents(t, pool, "site.apps.test")); n != 0 {
		t.Fatalf("%d states for the app's own hostname", n)
	}
}
