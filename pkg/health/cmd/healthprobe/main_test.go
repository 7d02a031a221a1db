package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(200 * time.Millisecond)
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	if err := probe(srv.URL+"/readyz", time.Second); err != nil {
		t.Fatalf("200: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := probe(srv.URL+"/readyz", time.Second); err == nil {
		t.Fatal("503 passed")
	}
	status = http.StatusOK
	if err := probe(srv.URL+"/slow", 50*time.Millisecond); err == nil {
		t.Fatal("an answer past the timeout passed")
	}
	if err := probe("http://127.0.0.1:1/readyz", time.Second); err == nil {
		t.Fatal("no answer passed")
	}
}
