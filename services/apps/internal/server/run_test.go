package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/logging"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/events"
	"tori.dev/services/apps/internal/keyring"
	"tori.dev/services/apps/internal/server"
)

// The assembled service: HTTP on its address, billing asked over the bus, the hostname
// checker running on its interval against DNS_RESOLVER, and a clean stop on cancel.
func TestRunServesUntilCancelled(t *testing.T) {
	t.Parallel()
	busCfg := apptest.BusConfig(t)
	dns := apptest.StartDNS(t)
	addr := freeAddr(t)
	cfg := apptest.Config(t, map[string]string{
		"DATABASE_URL": apptest.Database(t), "APPS_ADDR": addr,
		"AMQP_URL": busCfg.URL, "BUS_NAMESPACE": busCfg.Namespace, "BUS_QUEUE_TYPE": "classic", "BUS_QUEUE_EXPIRES": busCfg.QueueExpires.String(),
		"DNS_RESOLVER": dns.Addr, "DOMAIN_CHECK_INTERVAL": "50ms",
	})
	billing := apptest.Dial(t, busCfg, nil)
	apptest.Go(t, "fake billing", func(ctx context.Context) error {
		return billing.Serve(ctx, events.QueueAccountPlan, func(context.Context, bus.Delivery) (proto.Message, error) {
			return &billingv1.AccountPlanReply{Plan: "songbird", Limits: &billingv1.PlanLimits{Apps: 10, CustomDomains: 5}}, nil
		})
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &apptest.SyncBuffer{}
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, logging.New("apps", logs), "test") }()
	base := "http://" + addr
	apptest.Eventually(t, 30*time.Second, "healthz", func() bool {
		select {
		case err := <-done:
			t.Fatalf("Run returned before serving: %v", err)
		default:
		}
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	acct := apptest.NewAccount()
	call := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		callerid.Sign([]byte(cfg.SigningKey), req.Header.Set, callerid.Caller{AccountID: acct, UserID: "u", TokenKind: "session"}, method, path, time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if st, m := call(http.MethodPost, "/api/apps", map[string]any{"name": "running"}); st != http.StatusCreated || m["slug"] != "running" {
		t.Fatalf("create through Run: %d %v", st, m)
	}
	st, d := call(http.MethodPost, "/api/apps/running/domains", map[string]any{"hostname": "running.example.com"})
	if st != http.StatusCreated {
		t.Fatalf("domain: %d %v (billing's songbird plan should allow it)", st, d)
	}
	dns.SetTXT("_tori-challenge.running.example.com", d["verification"].(map[string]any)["value"].(string))
	apptest.Eventually(t, 10*time.Second, "hostname active", func() bool {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/apps/running/domains", nil)
		callerid.Sign([]byte(cfg.SigningKey), req.Header.Set, callerid.Caller{AccountID: acct}, http.MethodGet, "/api/apps/running/domains", time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `"status":"active"`)
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not stop")
	}
	if !strings.Contains(logs.String(), `"msg":"keyring ready"`) {
		t.Fatalf("start-up log: %.400s", logs.String())
	}
}

func TestRunRefusesToStartWithoutItsKeys(t *testing.T) {
	t.Parallel()
	s, _ := withValues(t, nil)
	cfg := reconfigure(t, s, map[string]string{"DATA_DIR": t.TempDir(), "APPS_ADDR": freeAddr(t)})
	err := server.Run(context.Background(), cfg, logging.New("apps", io.Discard), "test")
	if !errors.Is(err, keyring.ErrUnknownKey) {
		t.Fatalf("Run with a lost keyring: %v", err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
