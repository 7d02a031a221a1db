package api

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRateLimitWaitsRetryAfterOnceWithTheSameKey(t *testing.T) {
	cases := []struct {
		name     string
		answers  []int
		header   string
		body     string
		wantWait time.Duration
		wantErr  string
		wantHits int
	}{
		{"header then success", []int{429, 201}, "3", `{"error":"rate_limited","code":"rate_limited","retryAfter":3,"retryAfterSeconds":3}`, 3 * time.Second, "", 2},
		{"body only", []int{429, 201}, "", `{"error":"rate_limited","retryAfterSeconds":7}`, 7 * time.Second, "", 2},
		{"twice gives up", []int{429, 429, 201}, "2", `{"error":"rate_limited","message":"slow down"}`, 2 * time.Second, "rate_limited: slow down", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var keys []string
			hits := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				keys = append(keys, r.Header.Get("Idempotency-Key"))
				status := tc.answers[hits]
				hits++
				if status == 429 {
					if tc.header != "" {
						w.Header().Set("Retry-After", tc.header)
					}
					w.WriteHeader(429)
					w.Write([]byte(tc.body))
					return
				}
				w.WriteHeader(status)
				w.Write([]byte(`{"id":"a1","slug":"my-site"}`))
			}))
			defer srv.Close()
			var waited []time.Duration
			var notice bytes.Buffer
			c := &Client{BaseURL: srv.URL, Notice: &notice, Sleep: func(_ context.Context, d time.Duration) error {
				waited = append(waited, d)
				return nil
			}}
			app, _, err := c.CreateApp(context.Background(), AppCreate{Name: "my-site"})
			if hits != tc.wantHits {
				t.Fatalf("%d requests, want %d", hits, tc.wantHits)
			}
			if len(waited) != 1 || waited[0] != tc.wantWait {
				t.Fatalf("waited %v, want once %v", waited, tc.wantWait)
			}
			if !strings.Contains(notice.String(), "waiting "+tc.wantWait.String()) {
				t.Fatalf("notice %q does not say the wait", notice.String())
			}
			if keys[0] == "" || keys[0] != keys[1] {
				t.Fatalf("idempotency keys %q: want one, reused on the retry", keys)
			}
			if tc.wantErr != "" {
				if ae, ok := err.(*Error); !ok || ae.Words() != tc.wantErr {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || app.Slug != "my-site" {
				t.Fatalf("app %+v err %v", app, err)
			}
		})
	}
}

func TestEachOperationHasItsOwnKeyAndGetsNone(t *testing.T) {
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Method+"="+r.Header.Get("Idempotency-Key"))
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL}
	ctx := context.Background()
	c.CreateApp(ctx, AppCreate{})
	c.CreateApp(ctx, AppCreate{})
	c.ListApps(ctx, "")
	if len(keys) != 3 || keys[0] == keys[1] || len(keys[0]) != len("POST=")+36 || keys[2] != "GET=" {
		t.Fatalf("keys %q", keys)
	}
}

func TestErrorsAreInTheAPIsWords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/apps/a":
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"not found"}`))
		case "/api/apps/b/deploys":
			w.WriteHeader(413)
			w.Write([]byte(`{"error":"upload_too_large","code":"upload_too_large","message":"the upload is over 50 MB","limit":1,"plan":"nestling"}`))
		default:
			w.WriteHeader(502)
			w.Write([]byte(`bad gateway`))
		}
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL}
	ctx := context.Background()
	// Each error is the API's words, then the request it answered.
	_, _, err := c.GetApp(ctx, "a")
	if err == nil || err.Error() != "not found (GET "+srv.URL+"/api/apps/a)" || err.(*Error).Status != 404 || err.(*Error).Params[0] != "a" {
		t.Fatalf("err %v", err)
	}
	_, _, err = c.DeployImage(ctx, "b", ImageDeployRequest{Image: "x"})
	if err == nil || err.Error() != "upload_too_large: the upload is over 50 MB (POST "+srv.URL+"/api/apps/b/deploys)" {
		t.Fatalf("err %v", err)
	}
	_, _, err = c.ListApps(ctx, "")
	if err == nil || err.Error() != "bad gateway (GET "+srv.URL+"/api/apps)" {
		t.Fatalf("err %v", err)
	}
}

func TestFillEscapesParameters(t *testing.T) {
	if got := Fill("/api/apps/{slug}/domains/{hostname}", []string{"a", "x/y z"}); got != "/api/apps/a/domains/x%2Fy%20z" {
		t.Fatalf("got %s", got)
	}
}
