package profiling

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOnlyLoopbackAddressesServeProfiles(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"", true},
		{"127.0.0.1:6060", true},
		{"[::1]:6060", true},
		{"localhost:6060", true},
		{"0.0.0.0:6060", false},
		{":6060", false},
		{"10.0.0.1:6060", false},
		{"example.com:6060", false},
		{"127.0.0.1", false},
	} {
		err := Config{ProfileAddr: tc.addr}.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
	if err := (Config{ProfileAddr: "0.0.0.0:1"}).Validate(); !errors.Is(err, ErrNotLoopback) {
		t.Fatalf("err %v, want ErrNotLoopback", err)
	}
}

func TestServeAnswersProfilesUntilStopped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, Config{ProfileAddr: addr}, slog.New(slog.DiscardHandler)) }()
	var body []byte
	for i := 0; i < 100; i++ {
		resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(body) == 0 {
		t.Fatal("no goroutine profile served")
	}
	// The release a memory reading asks for first: a POST only, answering the heap's figures.
	if resp, err := http.Get("http://" + addr + "/debug/free-os-memory"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET free-os-memory: %v %v, want 405", resp, err)
	}
	resp, err := http.Post("http://"+addr+"/debug/free-os-memory", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var freed struct {
		HeapInuseBytes int64 `json:"heapInuseBytes"`
		Goroutines     int   `json:"goroutines"`
	}
	err = json.NewDecoder(resp.Body).Decode(&freed)
	_ = resp.Body.Close()
	if err != nil || freed.HeapInuseBytes <= 0 || freed.Goroutines <= 0 {
		t.Fatalf("free-os-memory answered %+v, %v", freed, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// SaveCPU writes the served profile to a file in a folder it makes, and says so when the
// address serves no profile.
func TestSaveCPUWritesTheProfile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" || r.URL.Query().Get("seconds") != "3" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("profile bytes"))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	file := filepath.Join(t.TempDir(), "new", "gw.cpu.pprof")
	if err := SaveCPU(addr, 3, file); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "profile bytes" {
		t.Fatalf("file holds %q, %v", got, err)
	}
	if err := SaveCPU(addr, 4, filepath.Join(t.TempDir(), "x")); err == nil {
		t.Fatal("a 404 from the profile server must be an error")
	}
}
