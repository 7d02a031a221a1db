package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	"tori.dev/services/billing/internal/billing"
	"tori.dev/services/billing/internal/bustest"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/store/storetest"
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

// useTestInfra points the process environment, which the commands read, at a fresh database
// and a bus namespace of the test's own.
func useTestInfra(t *testing.T) (adminURL string) {
	t.Helper()
	adminURL = storetest.NewDatabase(t)
	cfg := bustest.Config(t)
	t.Setenv("DATABASE_URL", adminURL)
	t.Setenv("AMQP_URL", cfg.URL)
	t.Setenv("BUS_NAMESPACE", cfg.Namespace)
	t.Setenv("BUS_QUEUE_TYPE", cfg.QueueType)
	t.Setenv("BUS_QUEUE_EXPIRES", cfg.QueueExpires.String())
	return adminURL
}

func TestSetPlanCommand(t *testing.T) {
	adminURL := useTestInfra(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := store.New(storetest.OpenPool(t, adminURL))
	id := uuid.Must(uuid.NewV7())
	svc := billing.NewService(st, bus.Publish)
	if err := st.InTx(ctx, func(tx pgx.Tx) error { return svc.RegisterAccount(ctx, tx, id, "ada@example.com") }); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := run(ctx, []string{"set-plan", "-account", "ada@example.com", "-plan", "flock", "-timeout", "30s"}, &out); err != nil {
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
	if err := run(ctx, []string{"set-plan", "-account", id.String(), "-plan", "flock"}, &out); err != nil {
		t.Fatalf("repeat: %v", err)
	}
	if !strings.Contains(out.String(), "already on flock (version 2)") {
		t.Fatalf("repeat output:\n%s", out.String())
	}
}

func TestServeAnswersAndStopsOnSignal(t *testing.T) {
	useTestInfra(t)
	addr := freeAddr(t)
	key := "serve-test-key"
	t.Setenv("BILLING_ADDR", addr)
	t.Setenv("GATEWAY_SIGNING_KEY", key)
	t.Setenv("LOG_LEVEL", "error")

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, io.Discard) }()

	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned before answering: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("never healthy: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	req, _ := http.NewRequest("GET", base+"/api/plans", nil)
	callerid.Sign([]byte(key), req.Header.Set, callerid.Caller{}, "GET", "/api/plans", time.Now())
	if status := statusOf(t, req); status != 200 {
		t.Fatalf("signed GET /api/plans: %d", status)
	}
	req, _ = http.NewRequest("GET", base+"/api/billing", nil)
	if status := statusOf(t, req); status != 401 {
		t.Fatalf("unsigned GET /api/billing: %d", status)
	}

	stop() // as SIGTERM does through signal.NotifyContext
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after stop: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
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

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
