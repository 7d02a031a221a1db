package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/logs/internal/busapi"
	"tori.dev/services/logs/internal/httpapi"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

var signingKey = []byte("test-signing-key")

// testNow is the service's clock in these tests; the gateway signature uses the real clock.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type env struct {
	db  *logstest.DB
	app *fiber.App
}

// billingDown is an account billing cannot answer for; every other account billing does not
// know is on the free plan, keeping one day.
const billingDown = "acc-billing-down"

// fakeBilling answers billing's plan question as billing does for an account it has not
// recorded.
type fakeBilling struct{}

func (fakeBilling) Request(_ context.Context, queue string, req, reply proto.Message) error {
	if queue != billingbus.QueueAccountPlan || req.(*billingv1.AccountPlanRequest).GetAccountId() == billingDown {
		return bus.ErrNoResponder
	}
	r := reply.(*billingv1.AccountPlanReply)
	r.Plan, r.Version, r.Limits = "nestling", 0, &billingv1.PlanLimits{LogRetentionDays: 1}
	return nil
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := logstest.NewDB(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	plans := usecase.NewPlans(db.Store, busapi.BillingPlans{Client: billingbus.PlanClient{Bus: fakeBilling{}, Timeout: time.Second}}, quiet)
	web := httpapi.New(httpapi.Deps{
		Reader:     usecase.NewReader(db.Store, db.Store, plans, func() time.Time { return testNow }),
		SigningKey: signingKey,
		Apps:       usecase.NewAppFinder(db.Store, nil, quiet),
		DB:         db.Pool,
		Identity:   health.NewIdentity("logs", "test"),
		Log:        quiet,
	})
	return &env{db: db, app: web}
}

// newApp records a live app of account and returns it.
func (e *env) newApp(t *testing.T, account, slug string) logs.App {
	t.Helper()
	a := logs.App{ID: uuid.NewString(), AccountID: account, Slug: slug}
	e.db.SaveApp(t, a)
	return a
}

type response struct {
	Status int
	Body   map[string]any
	Raw    string
}

// get sends a request signed by the gateway for account ("" signs an anonymous caller).
func (e *env) get(t *testing.T, account, slug string, params url.Values) response {
	t.Helper()
	target := "/api/apps/" + slug + "/logs"
	if len(params) > 0 {
		target += "?" + params.Encode()
	}
	req := httptest.NewRequest("GET", target, nil)
	caller := callerid.Caller{}
	if account != "" {
		caller = callerid.Caller{AccountID: account, UserID: "user-" + account, TokenKind: callerid.KindSession, TokenID: "tok"}
	}
	callerid.Sign(signingKey, req.Header.Set, caller, "GET", req.Host, target, time.Now())
	return e.do(t, req)
}

func (e *env) do(t *testing.T, req *http.Request) response {
	t.Helper()
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{Status: res.StatusCode, Raw: string(b)}
	if err := json.Unmarshal(b, &r.Body); err != nil {
		t.Fatalf("body is not a JSON object: %q", b)
	}
	return r
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func entriesAt(appID string, ts time.Time, n int) []logs.Entry {
	out := make([]logs.Entry, n)
	for i := range out {
		out[i] = logs.Entry{AppID: appID, Stream: logs.StreamStdout, Timestamp: ts, Message: "line"}
	}
	return out
}
