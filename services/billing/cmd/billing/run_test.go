package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

func TestCommandLineMistakesAreRefusedBeforeAnyWork(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"set-plan", "-plan", "flock"}, "-account"},
		{[]string{"set-plan", "-account", "ada", "-plan", "flock"}, "-account"},
		{[]string{"set-plan", "-account", "ada@example.com", "-plan", "eagle"}, "-plan"},
		{[]string{"set-plan", "-account", "ada@example.com", "-plan", "flock", "now"}, "unexpected argument"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := run(context.Background(), tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error about %s", err, tc.want)
			}
		})
	}
}

func TestSetPlanCommand(t *testing.T) {
	env := testinfra.ServiceEnv(t, "billing")
	// Billing's schema already migrated, so the test can record the account first.
	env["DATABASE_URL"] = testinfra.ServiceDatabase(t, store.Service(""), bus.Migrations, store.Migrations)
	ownURL, err := pgstore.ServiceURL(env["DATABASE_URL"], store.Service(""))
	if err != nil {
		t.Fatal(err)
	}
	env["BILLING_DATABASE_URL"] = ownURL
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := store.New(testinfra.OpenServicePool(t, env["DATABASE_URL"], store.Service("")))
	id := uuid.Must(uuid.NewV7())
	svc := usecase.New(st)
	if err := st.InTx(ctx, func(tx usecase.Tx) error { return svc.RegisterAccount(ctx, tx, id, "ada@example.com") }); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := setPlan(ctx, env, []string{"-account", "ada@example.com", "-plan", "flock", "-timeout", "30s"}, &out); err != nil {
		t.Fatalf("set-plan: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "is now on flock (version 2)") || !strings.Contains(out.String(), "event published") {
		t.Fatalf("output:\n%s", out.String())
	}
	a, err := st.Account(ctx, id)
	if err != nil || a.Plan != catalog.Flock || a.Version != 2 {
		t.Fatalf("stored %+v, %v", a, err)
	}
	if n, err := st.UnsentEvents(ctx); err != nil || n != 0 {
		t.Fatalf("%d events left unpublished (%v)", n, err)
	}

	// Repeating it is harmless: nothing changes, nothing more is announced.
	out.Reset()
	if err := setPlan(ctx, env, []string{"-account", id.String(), "-plan", "flock"}, &out); err != nil {
		t.Fatalf("repeat: %v", err)
	}
	if !strings.Contains(out.String(), "already on flock (version 2)") {
		t.Fatalf("repeat output:\n%s", out.String())
	}
}

// The whole service in-process: it answers signed requests, refuses unsigned ones, logs to
// the sink it is given, and stops cleanly when its context ends (testinfra checks that when
// the test ends, as SIGTERM ends it through signal.NotifyContext).
func TestServeAnswersAndStops(t *testing.T) {
	billing := testinfra.Service{Name: "billing", Serve: serve}.Start(t)
	key := []byte(billing.Env["GATEWAY_SIGNING_KEY"])

	req, _ := http.NewRequest("GET", billing.URL+"/api/plans", nil)
	callerid.Sign(key, req.Header.Set, callerid.Caller{}, "GET", req.Host, "/api/plans", time.Now())
	if status := statusOf(t, req); status != 200 {
		t.Fatalf("signed GET /api/plans: %d", status)
	}
	req, _ = http.NewRequest("GET", billing.URL+"/api/billing", nil)
	if status := statusOf(t, req); status != 401 {
		t.Fatalf("unsigned GET /api/billing: %d", status)
	}

	listening := false
	for _, l := range billing.Logs.Lines(t) {
		if l["msg"] == "listening" && l["service"] == "billing" {
			listening = true
		}
	}
	if !listening {
		t.Fatalf("no listening line in the log:\n%s", billing.Logs.String())
	}
}

func statusOf(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
