package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/testinfra"
)

// The whole service in-process: it becomes ready with its consumers bound (and its artifacts
// in the real S3 server, with the account and bucket bin/bootstrap makes), runs its three
// sweeps as periodic jobs, refuses unsigned callers and never logs its signing key or its
// object-store secret.
func TestServeRunsTheWholeService(t *testing.T) {
	store := testinfra.StartObjectStore(t).Holding(t, "DEPLOYS", "tori-deploys", "tori-artifacts")
	svc := testinfra.Service{Name: "deploys", Serve: serve, Env: store}.Start(t)

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
	if strings.Contains(svc.Logs.String(), store["DEPLOYS_OBJECT_STORE_SECRET_KEY"]) {
		t.Fatal("the object store's secret is in the log")
	}
}
