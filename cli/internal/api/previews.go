package api

import (
	"context"
)

// The shapes and calls of an app's previews (issue #40), owned by the deploys service: a
// deploy of its own URL that never touches the live app. Checked against the document by
// drift_test.go like every other shape.

// PreviewError is why a preview failed, in the zone's words.
type PreviewError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type Preview struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	App      string `json:"app"`
	URL      string `json:"url"`
	Status   string `json:"status"`
	DeployID string `json:"deployId"`
	Database string `json:"database"`
	// EnvKeys are the names of the preview's overrides; their values are never answered.
	EnvKeys    []string      `json:"envKeys"`
	TTLSeconds int           `json:"ttlSeconds"`
	ExpiresAt  string        `json:"expiresAt"`
	CreatedAt  string        `json:"createdAt"`
	UpdatedAt  string        `json:"updatedAt"`
	Error      *PreviewError `json:"error"`
}

// Settled reports whether the preview is past deploying: it serves, failed, or is gone.
func (p Preview) Settled() bool { return p.Status != "deploying" }

// PreviewOptions are what a preview takes besides a deploy's payload; zero values are left
// to the API's defaults (the new id as name, 72 h capped by the plan, no database).
type PreviewOptions struct {
	Name       string
	TTLSeconds int
	Env        map[string]string
	Database   string
}

// ImageRequest is the preview of the image deploy in.
func (o PreviewOptions) ImageRequest(in ImageDeployRequest) PreviewImageRequest {
	return PreviewImageRequest{Image: in.Image, Release: in.Release, Processes: in.Processes,
		Name: o.Name, TTLSeconds: o.TTLSeconds, Env: o.Env, Database: o.Database}
}

// PreviewImageRequest is an image deploy's body (but forceRestart: a preview is a new
// revision each time) plus the preview's options, flat so the drift check sees every field.
type PreviewImageRequest struct {
	Image      string            `json:"image"`
	Release    string            `json:"release,omitempty"`
	Processes  map[string]string `json:"processes,omitempty"`
	Name       string            `json:"name,omitempty"`
	TTLSeconds int               `json:"ttlSeconds,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	Database   string            `json:"database,omitempty"`
}

// PreviewForm names the multipart parts of a folder's preview: a deploy's plus the
// options', env a JSON object in one part. Its values are never marshalled.
type PreviewForm struct {
	Files      []string `json:"files"`
	Source     string   `json:"source"`
	Release    string   `json:"release"`
	ClearCache string   `json:"clearCache"`
	Name       string   `json:"name"`
	TTLSeconds string   `json:"ttlSeconds"`
	Env        string   `json:"env"`
	Database   string   `json:"database"`
}

type PreviewTTL struct {
	TTLSeconds int `json:"ttlSeconds"`
}

var (
	OpListPreviews   = &Operation{Method: "GET", Path: "/api/apps/{slug}/previews", Response: []Preview{}}
	OpPreviewImage   = &Operation{Method: "POST", Path: "/api/apps/{slug}/previews", Request: PreviewImageRequest{}, Response: Preview{}}
	OpPreviewUpload  = &Operation{Method: "POST", Path: "/api/apps/{slug}/previews", Form: PreviewForm{}, Response: Preview{}}
	OpGetPreview     = &Operation{Method: "GET", Path: "/api/apps/{slug}/previews/{id}", Response: Preview{}}
	OpSetPreviewTTL  = &Operation{Method: "PATCH", Path: "/api/apps/{slug}/previews/{id}", Request: PreviewTTL{}, Response: Preview{}}
	OpDeletePreview  = &Operation{Method: "DELETE", Path: "/api/apps/{slug}/previews/{id}"}
	OpPromotePreview = &Operation{Method: "POST", Path: "/api/apps/{slug}/previews/{id}/promote", Response: Deploy{}}
)

func (c *Client) ListPreviews(ctx context.Context, slug string) ([]Preview, Raw, error) {
	return call[[]Preview](ctx, c, req{op: OpListPreviews, params: []string{slug}})
}

func (c *Client) PreviewImage(ctx context.Context, slug string, in PreviewImageRequest) (Preview, Raw, error) {
	return call[Preview](ctx, c, req{op: OpPreviewImage, params: []string{slug}, body: in})
}

// PreviewUpload sends a folder's preview, multipart as a deploy's with the options' parts.
func (c *Client) PreviewUpload(ctx context.Context, slug string, up *Upload) (Preview, Raw, error) {
	return call[Preview](ctx, c, req{op: OpPreviewUpload, params: []string{slug}, upload: up})
}

// GetPreview reads one preview; id is its id or its name.
func (c *Client) GetPreview(ctx context.Context, slug, id string) (Preview, Raw, error) {
	return call[Preview](ctx, c, req{op: OpGetPreview, params: []string{slug, id}})
}

// SetPreviewTTL moves the preview's end to now + ttlSeconds (capped by the plan).
func (c *Client) SetPreviewTTL(ctx context.Context, slug, id string, ttlSeconds int) (Preview, Raw, error) {
	return call[Preview](ctx, c, req{op: OpSetPreviewTTL, params: []string{slug, id}, body: PreviewTTL{TTLSeconds: ttlSeconds}})
}

func (c *Client) DeletePreview(ctx context.Context, slug, id string) error {
	_, _, err := call[struct{}](ctx, c, req{op: OpDeletePreview, params: []string{slug, id}})
	return err
}

// PromotePreview makes the preview live: a new deploy of its payload with the app's live
// environment.
func (c *Client) PromotePreview(ctx context.Context, slug, id string) (Deploy, Raw, error) {
	return call[Deploy](ctx, c, req{op: OpPromotePreview, params: []string{slug, id}})
}
