package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// customer is the account whose app is read, set up the way a customer sets one up: through
// the gateway's public API, plus the operator's plan command.
type customer struct {
	email   string
	token   string // session token
	appID   string
	appSlug string
}

// apiClient talks to the gateway's public API.
type apiClient struct {
	base   string
	token  string
	client *http.Client
}

// call sends body as JSON and decodes a 2xx answer into out (when not nil).
func (c *apiClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// newCustomer signs a fresh account in by magic link, moves it to flock and creates one
// service app. Flock keeps 30 days of logs, so the whole seeded week is readable; the free
// plan's single day would hold only the last day's hours.
func newCustomer(ctx context.Context, s *stack) (*customer, error) {
	c := &customer{email: fmt.Sprintf("logs-bench-%d@example.test", time.Now().UnixNano())}
	api := &apiClient{base: s.gateway, client: &http.Client{Timeout: 30 * time.Second}}
	if err := c.signIn(ctx, api, s.dataDir); err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	api.token = c.token
	if err := c.moveToFlock(ctx, api, s); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	var app struct {
		ID   string `json:"id"`
		Slug string `json:"slug"`
	}
	if err := api.call(ctx, http.MethodPost, "/api/apps", map[string]string{"kind": "service"}, &app); err != nil {
		return nil, fmt.Errorf("create app: %w", err)
	}
	c.appID, c.appSlug = app.ID, app.Slug
	return c, nil
}

func (c *customer) signIn(ctx context.Context, api *apiClient, dataDir string) error {
	if err := api.call(ctx, http.MethodPost, "/api/auth/magic-link", map[string]string{"email": c.email}, nil); err != nil {
		return err
	}
	code, err := awaitMagicCode(ctx, filepath.Join(dataDir, "mail"), c.email)
	if err != nil {
		return err
	}
	var session struct {
		Token string `json:"token"`
	}
	if err := api.call(ctx, http.MethodPost, "/api/auth/magic-link/verify", map[string]string{"token": code}, &session); err != nil {
		return err
	}
	c.token = session.Token
	return nil
}

var verifyLink = regexp.MustCompile(`/auth/verify\?token=([A-Za-z0-9_-]+)`)

// awaitMagicCode reads the code from the mail file identity writes (SMTP_URL is unset).
func awaitMagicCode(ctx context.Context, dir, email string) (string, error) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || !bytes.Contains(b, []byte(email)) {
				continue
			}
			if m := verifyLink.FindSubmatch(b); m != nil {
				return string(m[1]), nil
			}
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("no mail to %s under %s", email, dir)
}

// moveToFlock runs the operator command and waits until the account shows the plan.
func (c *customer) moveToFlock(ctx context.Context, api *apiClient, s *stack) error {
	if err := s.command(ctx, "billing", "set-plan", "-account", c.email, "-plan", "flock"); err != nil {
		return err
	}
	return poll(ctx, 30*time.Second, "the account to show plan flock", func() (bool, error) {
		var account struct {
			Plan string `json:"plan"`
		}
		if err := api.call(ctx, http.MethodGet, "/api/account", nil, &account); err != nil {
			return false, err
		}
		return account.Plan == "flock", nil
	})
}

// poll calls check every 100 ms until it is true, fails, or timeout passes.
func poll(ctx context.Context, timeout time.Duration, what string, check func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := check()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
