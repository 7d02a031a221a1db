package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/testinfra"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/keyring"
)

// The assembled service: HTTP on its address, billing asked over the bus, the hostname
// checker running on its interval against DNS_RESOLVER, and a clean stop when the test ends
// (testinfra.Service checks it).
func TestServeUntilCancelled(t *testing.T) {
	t.Parallel()
	dns := apptest.StartDNS(t)
	svc := testinfra.Service{Name: "apps", Serve: serve, Env: map[string]string{
		"DNS_RESOLVER": dns.Addr, "DOMAIN_CHECK_INTERVAL": "50ms",
	}}.Start(t)
	if !strings.Contains(svc.Logs.String(), `"msg":"keyring ready"`) {
		t.Fatalf("start-up log: %.400s", svc.Logs.String())
	}

	// Billing on the service's own bus namespace.
	var busCfg bus.Config
	if err := pkgconfig.LoadMap(context.Background(), &busCfg, svc.Env); err != nil {
		t.Fatal(err)
	}
	billing := testinfra.DialBus(t, busCfg, nil)
	testinfra.Background(t, "fake billing", func(ctx context.Context) error {
		return billing.Serve(ctx, billingbus.QueueAccountPlan, func(context.Context, bus.Delivery) (proto.Message, error) {
			return &billingv1.AccountPlanReply{Plan: "songbird", Limits: &billingv1.PlanLimits{Apps: 10, CustomDomains: 5}}, nil
		})
	})

	key := []byte(svc.Env["GATEWAY_SIGNING_KEY"])
	acct := apptest.NewAccount()
	call := func(method, path string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, svc.URL+path, rd)
		callerid.Sign(key, req.Header.Set, callerid.Caller{AccountID: acct, UserID: "u", TokenKind: "session"}, method, req.Host, path, time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// Billing's responder may still be binding its queue: until it answers, a create is 503.
	var created map[string]any
	testinfra.Eventually(t, 30*time.Second, "a create billing answered", func() bool {
		st, b := call(http.MethodPost, "/api/apps", map[string]any{"name": "running"})
		if st == http.StatusServiceUnavailable {
			return false
		}
		if st != http.StatusCreated {
			t.Fatalf("create through serve: %d %s", st, b)
		}
		json.Unmarshal(b, &created)
		return true
	})
	if created["slug"] != "running" {
		t.Fatalf("created %v", created)
	}
	st, b := call(http.MethodPost, "/api/apps/running/domains", map[string]any{"hostname": "running.example.com"})
	if st != http.StatusCreated {
		t.Fatalf("domain: %d %s (billing's songbird plan should allow it)", st, b)
	}
	var d map[string]any
	json.Unmarshal(b, &d)
	dns.SetTXT("_tori-challenge.running.example.com", d["verification"].(map[string]any)["value"].(string))
	testinfra.Eventually(t, 10*time.Second, "hostname active", func() bool {
		st, b := call(http.MethodGet, "/api/apps/running/domains", nil)
		return st == http.StatusOK && strings.Contains(string(b), `"status":"active"`)
	})
}

func TestServeRefusesToStartWithoutItsKeys(t *testing.T) {
	t.Parallel()
	s, _ := withValues(t, nil)
	env := reenv(s, map[string]string{"DATA_DIR": t.TempDir(), "APPS_ADDR": testinfra.FreeAddr(t)})
	err := serve(context.Background(), env, io.Discard)
	if !errors.Is(err, keyring.ErrUnknownKey) {
		t.Fatalf("serve with a lost keyring: %v", err)
	}
}
