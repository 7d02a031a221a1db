package vies

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"tori.dev/services/billing/internal/vat"
)

// A local stand-in for VIES answering as the REST service does.
func TestCheck(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		valid  bool
		outage bool
	}{
		{"valid", 200, `{"countryCode":"DE","vatNumber":"123456789","valid":true,"name":"---"}`, true, false},
		{"not valid", 200, `{"countryCode":"DE","vatNumber":"123456789","valid":false}`, false, false},
		{"member state down", 200, `{"actionSucceed":false,"errorWrappers":[{"error":"MS_UNAVAILABLE"}]}`, false, true},
		{"too many requests", 429, `{"actionSucceed":false,"errorWrappers":[{"error":"MS_MAX_CONCURRENT_REQ"}]}`, false, true},
		{"VIES down", 503, `<html>maintenance</html>`, false, true},
		{"bad input: not valid, nothing to retry", 400, `{"actionSucceed":false,"errorWrappers":[{"error":"INVALID_INPUT"}]}`, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req request
				if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || req.CountryCode != "DE" || req.VATNumber != "123456789" {
					t.Errorf("request %s %+v", r.Method, req)
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			valid, err := New(srv.URL, 5*time.Second).Check(context.Background(), "DE", "123456789")
			if errors.Is(err, vat.ErrVIESUnavailable) != tc.outage || (err != nil && !tc.outage) || valid != tc.valid {
				t.Fatalf("Check = %v, %v", valid, err)
			}
		})
	}
}

func TestUnreachableIsAnOutage(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if _, err := New(url, time.Second).Check(context.Background(), "DE", "1"); !errors.Is(err, vat.ErrVIESUnavailable) {
		t.Fatalf("got %v", err)
	}
}
