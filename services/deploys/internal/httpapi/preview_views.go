package httpapi

import (
	"tori.dev/contract/apitime"
	"tori.dev/contract/names"
	"tori.dev/services/deploys/internal/preview"
)

// previewView is the API's Preview (DESIGN40 "Previews").
type previewView struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	App        string            `json:"app"`
	URL        string            `json:"url"`
	Status     string            `json:"status"`
	DeployID   string            `json:"deployId"`
	Database   string            `json:"database"`
	EnvKeys    []string          `json:"envKeys"`
	TTLSeconds int64             `json:"ttlSeconds"`
	ExpiresAt  string            `json:"expiresAt"`
	CreatedAt  string            `json:"createdAt"`
	UpdatedAt  string            `json:"updatedAt"`
	Error      *previewErrorView `json:"error"`
}

// previewErrorView is why a preview failed: the zone's deploy error code.
type previewErrorView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// previewURLs builds a preview's URL as the apps service builds an app's: https, the host
// alone (the edge's public HTTPS port is the default one).
type previewURLs struct{ domain string }

func (u previewURLs) url(slug, id string) string {
	return "https://" + names.PreviewHost(slug, id, u.domain)
}

func (u previewURLs) view(slug string, p *preview.Preview) previewView {
	v := previewView{
		ID: p.ID, Name: p.Name, App: slug, URL: u.url(slug, p.ID), Status: string(p.Status), DeployID: p.DeployID,
		Database: string(p.Database), EnvKeys: p.EnvKeys, TTLSeconds: p.TTLSeconds, ExpiresAt: apitime.Format(p.ExpiresAt),
		CreatedAt: apitime.Format(p.CreatedAt), UpdatedAt: apitime.Format(p.UpdatedAt),
	}
	if v.EnvKeys == nil {
		v.EnvKeys = []string{}
	}
	if p.Status == preview.Failed && p.Error != "" {
		v.Error = &previewErrorView{Code: p.Error, Message: "the preview's revision failed on its zone (" + p.Error + ")"}
	}
	return v
}

func (u previewURLs) views(slug string, ps []*preview.Preview) []previewView {
	out := make([]previewView, 0, len(ps))
	for _, p := range ps {
		out = append(out, u.view(slug, p))
	}
	return out
}
