// Command zone-seed puts apps live in a zone as if the zone had prepared and activated each
// one, for `make bench-scale` (issue 41): thousands of apps in seconds where deploying each
// would take hours. It writes through the zone's own code (the store's revision, route,
// formation and uid records; the sites package's bundle and manifest; the disk image the
// sandbox mounts), so the agent reads the seeded apps back exactly as it reads its own.
//
// It reads the agent's environment (the harness hands it the zone agent's settings and
// credentials) and, on standard input, a JSON Request; it prints a JSON Reply.
//
// A service app is a clone of one service revision the zone really prepared (Request.
// Template): its record's process types and limits, its formation, and, for the apps asked
// WithTree, its built tree on a disk image of the app's own. The others get no tree: the
// bench never wakes them, and a napping service's disk image is what the zone makes lazily.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	pkgconfig "tori.dev/pkg/config"
	"tori.dev/services/zoneagent/internal/config"
)

// Request is what to seed.
type Request struct {
	// Template is the prepared service revision every service app is cloned from.
	Template TemplateRef `json:"template"`
	Apps     []App       `json:"apps"`
	// Parallel bounds the concurrent object puts, transactions and disk images (default 8).
	Parallel int `json:"parallel"`
}

// TemplateRef names the template revision.
type TemplateRef struct {
	AppID    string `json:"app_id"`
	DeployID string `json:"deploy_id"`
}

// App is one app to put live.
type App struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	AccountID string `json:"account_id"`
	// Kind is "static" or "service".
	Kind     string `json:"kind"`
	DeployID string `json:"deploy_id"`
	// WithTree gives a service app its built tree (on its own disk image), so it can wake.
	WithTree bool `json:"with_tree"`
}

// Reply says what was seeded.
type Reply struct {
	Static   int               `json:"static"`
	Services int               `json:"services"`
	Trees    int               `json:"trees"`
	UIDs     map[string]uint32 `json:"uids"` // service apps' uids, by app id
	Took     string            `json:"took"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "zone-seed:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var cfg config.Config
	if err := pkgconfig.Load(ctx, &cfg); err != nil {
		return err
	}
	var req Request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if req.Parallel <= 0 {
		req.Parallel = 8
	}
	start := time.Now()
	s, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.close()
	reply, err := s.seed(ctx, req)
	if err != nil {
		return err
	}
	reply.Took = time.Since(start).Round(time.Millisecond).String()
	return json.NewEncoder(os.Stdout).Encode(reply)
}
