package httpapi_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"tori.dev/pkg/callerid"
	"tori.dev/services/apps/internal/apptest"
)

// The apps service's own throughput over real HTTP (a TCP listener, keep-alive clients),
// with Postgres and the local keyring behind it. Not part of `go test ./...`'s default run
// (benchmarks run only with -bench):
//
//	go test -run '^$' -bench . -benchtime 3000x ./internal/httpapi/

type benchServer struct {
	*apptest.Service
	base   string
	client *http.Client
}

func startBench(b *testing.B) *benchServer {
	b.Helper()
	s := apptest.New(b, apptest.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.HTTP.Listener(ln)
	b.Cleanup(func() { s.HTTP.ShutdownWithTimeout(5 * time.Second) })
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	return &benchServer{Service: s, base: "http://" + ln.Addr().String(), client: &http.Client{Transport: tr}}
}

func (s *benchServer) call(b *testing.B, acct, method, path string, body any, want int) {
	enc, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.base+path, bytes.NewReader(enc))
	callerid.Sign([]byte(s.Cfg.SigningKey), req.Header.Set, callerid.Caller{AccountID: acct, TokenKind: "session"}, method, req.Host, path, time.Now())
	resp, err := s.client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Errorf("%s %s: %d", method, path, resp.StatusCode)
	}
}

// BenchmarkAppCreates creates apps with generated slugs, spread over flock accounts so that
// no account reaches its 50-app limit.
func BenchmarkAppCreates(b *testing.B) {
	s := startBench(b)
	const perAccount = 40
	accounts := make([]string, b.N/perAccount+1)
	for i := range accounts {
		accounts[i] = apptest.NewAccount()
		s.SetPlan(accounts[i], "flock", 1)
	}
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1) - 1
			s.call(b, accounts[int(i)/perAccount], http.MethodPost, "/api/apps", nil, http.StatusCreated)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// BenchmarkEnvWrites writes 32-byte values to 100 keys of 64 apps on 8 accounts: the first
// pass creates rows (201), later ones update them (200); both seal through the keyring.
func BenchmarkEnvWrites(b *testing.B) {
	s := startBench(b)
	type target struct{ acct, slug string }
	var targets []target
	for a := 0; a < 8; a++ {
		acct := apptest.NewAccount()
		s.SetPlan(acct, "flock", 1)
		for i := 0; i < 8; i++ {
			slug := fmt.Sprintf("bench-%d-%d", a, i)
			s.CreateApp(acct, map[string]any{"name": slug})
			targets = append(targets, target{acct, slug})
		}
	}
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		v := make([]byte, 16)
		for pb.Next() {
			i := n.Add(1) - 1
			tg := targets[int(i)%len(targets)]
			rand.Read(v)
			req := map[string]any{"key": fmt.Sprintf("KEY_%d", (int(i)/len(targets))%100), "value": hex.EncodeToString(v)}
			enc, _ := json.Marshal(req)
			path := "/api/apps/" + tg.slug + "/env"
			hreq, _ := http.NewRequest(http.MethodPut, s.base+path, bytes.NewReader(enc))
			callerid.Sign([]byte(s.Cfg.SigningKey), hreq.Header.Set, callerid.Caller{AccountID: tg.acct, TokenKind: "session"}, http.MethodPut, hreq.Host, path, time.Now())
			resp, err := s.client.Do(hreq)
			if err != nil {
				b.Error(err)
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
				b.Errorf("PUT %s: %d", path, resp.StatusCode)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}
