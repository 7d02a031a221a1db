package service

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/httpserver"
	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/testinfra"
)

// testConfig stands in for a service's config.
type testConfig struct {
	AMQPURL   string `env:"SVC_AMQP_URL, required"`
	Namespace string `env:"SVC_NAMESPACE"`
}

func (c testConfig) BusConfig() bus.Config {
	return bus.Config{URL: c.AMQPURL, Namespace: c.Namespace, QueueType: "classic", MaxAttempts: 1, RequestTimeout: time.Second}
}

func testEnv(t *testing.T) map[string]string {
	return map[string]string{"SVC_AMQP_URL": testinfra.AMQPURL(t), "SVC_NAMESPACE": testinfra.Namespace(t) + "."}
}

func TestRunRefusesAnInvalidConfigBeforeOpeningAnything(t *testing.T) {
	logs := &testinfra.LogBuffer{}
	err := Run(context.Background(), Spec[*testConfig]{Name: "svc", Env: map[string]string{}, Logs: logs},
		func(context.Context, *Process, *testConfig) error {
			t.Fatal("build ran with an invalid config")
			return nil
		})
	if err == nil || !strings.Contains(err.Error(), "SVC_AMQP_URL") {
		t.Fatalf("err = %v, want the missing variable named", err)
	}
	if logs.String() != "" {
		t.Fatalf("logged before the config was valid: %s", logs)
	}
}

func TestRunServesUntilStoppedThenClosesInReverse(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &testinfra.LogBuffer{}
	var (
		mu     sync.Mutex
		closed []string
		rounds int
	)
	addr := make(chan string, 1)
	zone := func(cfg *testConfig) []any { return []any{"ns", cfg.Namespace} }
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Spec[*testConfig]{Name: "svc", Version: "v1", Env: testEnv(t), Logs: logs, LogWith: zone},
			func(ctx context.Context, p *Process, cfg *testConfig) error {
				if p.Bus != nil {
					t.Error("bus dialed before build asked for it")
				}
				if err := p.DialBus(ctx); err != nil {
					return err
				}
				web := httpserver.New(httpserver.Options{Name: "svc", Log: p.Log, Health: &p.Health})
				if err := p.ServeHTTP(web, "127.0.0.1:0", time.Second); err != nil {
					return err
				}
				p.OnClose(func() { mu.Lock(); closed = append(closed, "first"); mu.Unlock() })
				p.OnClose(func() { mu.Lock(); closed = append(closed, "second"); mu.Unlock() })
				p.Every(lifecycle.Job{Name: "count", Every: time.Hour, Immediately: true, Run: func(context.Context) (int64, error) {
					mu.Lock()
					rounds++
					mu.Unlock()
					return 0, nil
				}})
				p.Listening("extra", "yes")
				addr <- p.addrs[1].(string)
				return nil
			})
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("Run returned early: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never 200: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("clean stop returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(closed, ",") != "second,first" || rounds != 1 {
		t.Fatalf("closed %v, rounds %d", closed, rounds)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still serving after stop")
	}
	var listening, stopped bool
	for _, l := range logs.Lines(t) {
		if l["ns"] == nil {
			t.Errorf("line without LogWith's attribute: %v", l)
		}
		listening = listening || (l["msg"] == "listening" && l["extra"] == "yes" && l["addr"] != nil)
		stopped = stopped || l["msg"] == "stopped"
	}
	if !listening || !stopped {
		t.Fatalf("listening %v stopped %v in %s", listening, stopped, logs)
	}
}

func TestRunStopsWhenAPartStopsEarly(t *testing.T) {
	errBuild := errors.New("no keyring")
	err := Run(context.Background(), Spec[*testConfig]{Name: "svc", Env: testEnv(t), Logs: &testinfra.LogBuffer{}},
		func(ctx context.Context, p *Process, cfg *testConfig) error {
			p.Go("forever", func(ctx context.Context) error { <-ctx.Done(); return nil })
			p.Go("quitter", func(context.Context) error { return nil })
			return nil
		})
	if err == nil || !strings.Contains(err.Error(), "quitter stopped unexpectedly") {
		t.Fatalf("err = %v", err)
	}
	err = Run(context.Background(), Spec[*testConfig]{Name: "svc", Env: testEnv(t), Logs: &testinfra.LogBuffer{}},
		func(context.Context, *Process, *testConfig) error { return errBuild })
	if !errors.Is(err, errBuild) {
		t.Fatalf("build's error = %v", err)
	}
}
