package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

// The whole service in-process: it becomes ready with its consumers bound, runs its three
// sweeps as periodic jobs, refuses unsigned callers and never logs its signing key.
func TestServeRunsTheWholeService(t *testing.T) {
	svc := testinfra.Service{Name: "deploys", Serve: serve}.Start(t)

	res, err := http.Get(svc.URL + "/api/apps/site/deploys")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned request: %d, want 401", res.StatusCode)
	}

	want := []string{"close overdue deploys", "clean deleted apps", "sweep unreferenced artifacts"}
	testinfra.Eventually(t, 10*time.Second, "the sweeps to start as periodic jobs", func() bool {
		started := map[string]bool{}
		for _, l := range svc.Logs.Lines(t) {
			if l["msg"] == "periodic job started" {
				started[l["job"].(string)] = true
			}
		}
		for _, job := range want {
			if !started[job] {
				return false
			}
		}
		return true
	})
	if strings.Contains(svc.Logs.String(), svc.Env["GATEWAY_SIGNING_KEY"]) {
		t.Fatal("the signing key is in the log")
	}
}
