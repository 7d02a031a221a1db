package httpapi

import (
	"tori.dev/contract/apitime"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/env"
)

// The JSON shapes of the API, kept apart from the domain's records; each has one converter.

// appJSON is the contract's App: every field always present.
type appJSON struct {
	ID              string  `json:"id"`
	Slug            string  `json:"slug"`
	Name            string  `json:"name"`
	Region          string  `json:"region"`
	Zone            string  `json:"zone"`
	Status          string  `json:"status"`
	Framework       string  `json:"framework"`
	Kind            string  `json:"kind"`
	CurrentDeployID *string `json:"currentDeployId"`
	URL             string  `json:"url"`
	CreatedAt       string  `json:"createdAt"`
	UpdatedAt       string  `json:"updatedAt"`
	// Team is the owning team's slug, as the caller's memberships name it ("" unknown).
	Team string `json:"team"`
}

func toAppJSON(a apps.App, appsDomain, team string) appJSON {
	return appJSON{
		Team: team, ID: a.ID, Slug: a.Slug, Name: a.Name, Region: a.Region, Zone: a.Zone, Status: a.Status,
		Framework: a.Framework, Kind: a.Kind, CurrentDeployID: a.CurrentDeployID,
		URL:       "https://" + a.Slug + "." + appsDomain,
		CreatedAt: apitime.Format(a.CreatedAt), UpdatedAt: apitime.Format(a.UpdatedAt),
	}
}

// deleteJSON is the contract's Delete result.
type deleteJSON struct {
	OK        bool `json:"ok"`
	Reclaimed bool `json:"reclaimed"`
}

// envJSON is one variable as listed: the key and the masked value, nothing else.
type envJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func toEnvJSON(m env.Masked) envJSON { return envJSON{Key: m.Key, Value: m.Value} }

type verificationJSON struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

type domainJSON struct {
	Hostname     string           `json:"hostname"`
	Status       string           `json:"status"`
	Verification verificationJSON `json:"verification"`
	CreatedAt    string           `json:"createdAt"`
	Certificate  certificateJSON  `json:"certificate"`
}

// certificateJSON is the edge's certificate for a hostname: expiresAt and lastError are null
// when there is none.
type certificateJSON struct {
	Status    string  `json:"status"`
	ExpiresAt *string `json:"expiresAt"`
	LastError *string `json:"lastError"`
}

func toCertificateJSON(c domains.Certificate) certificateJSON {
	c = c.Shown()
	out := certificateJSON{Status: c.Status}
	if c.ExpiresAt != nil {
		s := apitime.Format(*c.ExpiresAt)
		out.ExpiresAt = &s
	}
	if c.LastError != "" {
		out.LastError = &c.LastError
	}
	return out
}

func toDomainJSON(d domains.Domain) domainJSON {
	v := d.Verification()
	return domainJSON{
		Hostname:     d.Hostname,
		Status:       d.Status,
		Verification: verificationJSON{Type: v.Type, Name: v.Name, Value: v.Value},
		CreatedAt:    apitime.Format(d.CreatedAt),
		Certificate:  toCertificateJSON(d.Certificate),
	}
}
