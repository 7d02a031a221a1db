package pooler

import (
	"fmt"
	"sort"

	"tori.dev/services/zoneagent/internal/usecase"
)

// The caps' store: whose each admitted database is and its cap, and whether the size check
// made it read-only (the rule itself is internal/sizecap). It lives in the pooler's record
// (state.json, one atomic write with the passwords), so a restart knows every cap without
// asking the control plane; PgBouncer's supervision is pooler.go.

// Track records whose database name is and its cap.
func (p *Pooler) Track(name, databaseID, appID string, maxBytes int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.state.Databases[name]
	if !ok {
		return fmt.Errorf("managed: track %s: not admitted", name)
	}
	d.DatabaseID, d.AppID, d.MaxBytes = databaseID, appID, maxBytes
	p.state.Databases[name] = d
	return p.writeFiles()
}

// Tracked lists the admitted databases that have a cap, by name.
func (p *Pooler) Tracked() []usecase.TrackedDatabase {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]usecase.TrackedDatabase, 0, len(p.state.Databases))
	for n, d := range p.state.Databases {
		if d.MaxBytes > 0 {
			out = append(out, usecase.TrackedDatabase{Name: n, DatabaseID: d.DatabaseID, AppID: d.AppID, MaxBytes: d.MaxBytes, ReadOnly: d.ReadOnly})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MarkReadOnly records whether database name was made read-only.
func (p *Pooler) MarkReadOnly(name string, on bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.state.Databases[name]
	if !ok {
		return nil
	}
	d.ReadOnly = on
	p.state.Databases[name] = d
	return p.writeFiles()
}

// AppPools are the pool sizes of each app's databases, by app id (databases the zone has
// not recorded an app for are left out).
func (p *Pooler) AppPools() map[string][]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]int{}
	for _, d := range p.state.Databases {
		if d.AppID != "" {
			out[d.AppID] = append(out[d.AppID], d.PoolSize)
		}
	}
	return out
}
