// Package vies is vat.VIES on the European Commission's VIES REST service
// (check-vat-number). Tests run it against a local server: nothing in the tests reaches VIES.
package vies

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"tori.dev/services/billing/internal/vat"
)

// DefaultURL is VIES's check-vat-number endpoint.
const DefaultURL = "https://ec.europa.eu/taxation_customs/vies/rest-api/check-vat-number"

// Client asks VIES whether a VAT ID is valid.
type Client struct {
	URL  string
	HTTP *http.Client
}

var _ vat.VIES = Client{}

// New is a client of url with a timeout per check.
func New(url string, timeout time.Duration) Client {
	return Client{URL: url, HTTP: &http.Client{Timeout: timeout}}
}

type request struct {
	CountryCode string `json:"countryCode"`
	VATNumber   string `json:"vatNumber"`
}

type response struct {
	Valid *bool `json:"valid"`
	// VIES reports its own and the member states' outages here, with 200 or an error status.
	ActionSucceed *bool `json:"actionSucceed"`
	ErrorWrappers []struct {
		Error string `json:"error"`
	} `json:"errorWrappers"`
	UserError string `json:"userError"`
}

// Check asks VIES. Any outage (network, timeout, 5xx, VIES's or a member state's
// unavailability, rate limits) is vat.ErrVIESUnavailable, so the format check stands in and
// the ID is checked again later.
func (c Client) Check(ctx context.Context, prefix, number string) (bool, error) {
	body, _ := json.Marshal(request{CountryCode: prefix, VATNumber: number})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("vies: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return false, fmt.Errorf("%w: %v", vat.ErrVIESUnavailable, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return false, fmt.Errorf("%w: %v", vat.ErrVIESUnavailable, err)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil || resp.StatusCode >= 500 {
		return false, fmt.Errorf("%w: status %d", vat.ErrVIESUnavailable, resp.StatusCode)
	}
	if len(r.ErrorWrappers) > 0 || (r.ActionSucceed != nil && !*r.ActionSucceed) || r.Valid == nil {
		code := r.UserError
		if len(r.ErrorWrappers) > 0 {
			code = r.ErrorWrappers[0].Error
		}
		if code == "INVALID_INPUT" {
			return false, nil // VIES says the number cannot be one: not valid, nothing to retry
		}
		return false, fmt.Errorf("%w: %s (status %d)", vat.ErrVIESUnavailable, code, resp.StatusCode)
	}
	return *r.Valid, nil
}
