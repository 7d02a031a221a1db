package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
)

// world stands in for the services the databases service asks: the apps service, which
// knows each account's apps by slug, and billing, which knows every account is on nestling.
type world struct {
	apps map[[2]string]*appsv1.AppCreated // (account, slug) → app
}

func (w *world) serve(t *testing.T, env map[string]string) {
	t.Helper()
	var cfg bus.Config
	if err := pkgconfig.LoadMap(context.Background(), &cfg, env); err != nil {
		t.Fatal(err)
	}
	conn := testinfra.DialBus(t, cfg, nil)
	testinfra.Background(t, "apps lookup", func(ctx context.Context) error {
		return conn.Serve(ctx, appsbus.QueueAppLookup, func(_ context.Context, d bus.Delivery) (proto.Message, error) {
			var req appsv1.AppLookupRequest
			if err := d.Decode(&req); err != nil {
				return nil, err
			}
			return &appsv1.AppLookupReply{App: w.apps[[2]string{req.GetAccountId(), req.GetSlug()}]}, nil
		})
	})
	testinfra.Background(t, "billing plans", func(ctx context.Context) error {
		return conn.Serve(ctx, billingbus.QueueAccountPlan, func(context.Context, bus.Delivery) (proto.Message, error) {
			return &billingv1.AccountPlanReply{Plan: "nestling", Version: 0, Limits: &billingv1.PlanLimits{
				DatabaseBytes: 268435456, DatabaseConnections: 5,
			}}, nil
		})
	})
	// Both answer before the service is asked anything; asked as the service itself, since
	// a responder answers principals only.
	asker := testinfra.DialBus(t, cfg.WithURL(env["DATABASES_AMQP_URL"]), nil)
	testinfra.Eventually(t, 20*time.Second, "the stand-ins answer", func() bool {
		ctx := context.Background()
		_, errApps := appsbus.AppClient{Bus: asker}.Lookup(ctx, uuid.NewString(), "x")
		_, errPlan := billingbus.PlanClient{Bus: asker}.AccountPlan(ctx, uuid.NewString())
		return errApps == nil && errPlan == nil
	})
}

func (w *world) app(account, slug, kind string) *appsv1.AppCreated {
	a := &appsv1.AppCreated{AppId: uuid.NewString(), AccountId: account, Slug: slug, Kind: kind, Region: "eu", Zone: "local", CreatedAt: timestamppb.Now()}
	w.apps[[2]string{account, slug}] = a
	return a
}

// call sends method path as the gateway would for account and decodes the JSON answer.
func call(t *testing.T, r *testinfra.Running, account, method, path string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, r.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	callerid.Sign([]byte(r.Env["GATEWAY_SIGNING_KEY"]), req.Header.Set, callerid.Caller{AccountID: account, UserID: "u", TokenKind: "session", TokenID: "t"}, method, req.Host, path, time.Now())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("%s %s: %d, body not JSON: %v", method, path, res.StatusCode, err)
	}
	return res.StatusCode, body
}

// The routes of one app's database, with ownership decided by the apps service's answer.
func TestDatabaseRoutes(t *testing.T) {
	w := &world{apps: map[[2]string]*appsv1.AppCreated{}}
	acc, other := uuid.NewString(), uuid.NewString()
	r := testinfra.Service{Name: "databases", Serve: serve}.Start(t)
	w.serve(t, r.Env)
	svcApp := w.app(acc, "api", "service")
	w.app(acc, "site", "static")
	w.app(acc, "bare", "service")

	status, body := call(t, r, acc, "POST", "/api/apps/api/database")
	if status != 202 || body["status"] != "provisioning" || body["appId"] != svcApp.GetAppId() || body["message"] != nil {
		t.Fatalf("create: %d %v", status, body)
	}
	if len(body) != 5 {
		t.Fatalf("create answered fields beyond the contract's five: %v", body)
	}
	if _, err := uuid.Parse(body["id"].(string)); err != nil {
		t.Fatalf("id %v", body["id"])
	}
	if _, err := time.Parse(time.RFC3339, body["createdAt"].(string)); err != nil {
		t.Fatalf("createdAt %v", body["createdAt"])
	}
	id := body["id"]

	for _, tc := range []struct {
		name, account, method, path string
		status                      int
		code                        string
	}{
		{"get", acc, "GET", "/api/apps/api/database", 200, ""},
		{"second create", acc, "POST", "/api/apps/api/database", 409, "database_exists"},
		{"static app", acc, "POST", "/api/apps/site/database", 400, "service_only"},
		{"unknown app", acc, "GET", "/api/apps/nope/database", 404, ""},
		{"unknown app create", acc, "POST", "/api/apps/nope/database", 404, ""},
		{"another account's app", other, "GET", "/api/apps/api/database", 404, ""},
		{"another account's create", other, "POST", "/api/apps/api/database", 404, ""},
		{"another account's delete", other, "DELETE", "/api/apps/api/database", 404, ""},
		{"app without a database", acc, "GET", "/api/apps/bare/database", 404, ""},
		{"delete without a database", acc, "DELETE", "/api/apps/bare/database", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := call(t, r, tc.account, tc.method, tc.path)
			if status != tc.status {
				t.Fatalf("%d %v, want %d", status, body, tc.status)
			}
			switch {
			case tc.code != "" && body["code"] != tc.code:
				t.Fatalf("code %v, want %s", body["code"], tc.code)
			case tc.status == 404 && body["error"] != "not found":
				t.Fatalf("404 body %v", body)
			case tc.status == 200 && (body["id"] != id || body["status"] != "provisioning"):
				t.Fatalf("get %v", body)
			}
		})
	}

	status, body = call(t, r, acc, "DELETE", "/api/apps/api/database")
	if status != 202 || body["status"] != "deleting" || body["id"] != id {
		t.Fatalf("delete: %d %v", status, body)
	}
	// Asked again while the zone has not confirmed, it answers the same.
	if status, body = call(t, r, acc, "DELETE", "/api/apps/api/database"); status != 202 || body["status"] != "deleting" {
		t.Fatalf("second delete: %d %v", status, body)
	}

	// A deleted app is the apps service's to say: once it answers nothing, every route is 404.
	delete(w.apps, [2]string{acc, "api"})
	if status, _ := call(t, r, acc, "GET", "/api/apps/api/database"); status != 404 {
		t.Fatalf("deleted app: %d", status)
	}
}
