package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/bundle"
	"tori.dev/cli/internal/ui"
)

// selectFolder reads the app's kind and picks dir's files for it (bundle.Select).
func (s *state) selectFolder(ctx context.Context, slug, dir string) (api.App, bundle.Kind, bundle.Selection, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return api.App{}, 0, bundle.Selection{}, err
	}
	if !info.IsDir() {
		return api.App{}, 0, bundle.Selection{}, fmt.Errorf("%s is not a folder", dir)
	}
	app, _, err := s.client.GetApp(ctx, slug)
	if err != nil {
		return api.App{}, 0, bundle.Selection{}, err
	}
	kind := bundle.StaticSite
	if app.Kind == "service" {
		kind = bundle.ServiceSource
	}
	sel, err := bundle.Select(dir, kind)
	return app, kind, sel, err
}

// dryRun lists what a deploy of dir would send, one path a line on stdout (so it pipes), and
// what it leaves out on stderr; it sends nothing.
func (s *state) dryRun(ctx context.Context, slug, dir string) error {
	app, kind, sel, err := s.selectFolder(ctx, slug, dir)
	if err != nil {
		return err
	}
	if kind == bundle.ServiceSource {
		if err := bundle.CheckSource(dir, sel); err != nil {
			return err
		}
	}
	if s.json {
		type file struct {
			Path string `json:"path"`
			Size int64  `json:"size"`
		}
		type leftOut struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		}
		out := struct {
			App     string    `json:"app"`
			Kind    string    `json:"kind"`
			Files   []file    `json:"files"`
			LeftOut []leftOut `json:"leftOut"`
		}{App: slug, Kind: app.Kind, Files: []file{}, LeftOut: []leftOut{}}
		for _, f := range sel.Files {
			out.Files = append(out.Files, file{f.Path, f.Size})
		}
		for _, l := range sel.LeftOut {
			out.LeftOut = append(out.LeftOut, leftOut{l.Path, l.Reason})
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return s.printJSON(b)
	}
	var total int64
	for _, f := range sel.Files {
		fmt.Fprintln(s.env.Stdout, f.Path)
		total += f.Size
	}
	what := "files"
	if kind == bundle.ServiceSource {
		what = "files in its source tarball"
	}
	fmt.Fprintf(s.env.Stderr, "Would send %d %s (%s) to %s; nothing was sent.\n", len(sel.Files), what, ui.Bytes(total), slug)
	if len(sel.LeftOut) > 0 {
		fmt.Fprintln(s.env.Stderr, "Left out:")
		for _, l := range sel.LeftOut {
			fmt.Fprintf(s.env.Stderr, "  %s  (%s)\n", l.Path, l.Reason)
		}
	}
	return nil
}

// leftOutNote is one stderr line naming what a deploy leaves out, the first few by name.
func leftOutNote(sel bundle.Selection) string {
	if len(sel.LeftOut) == 0 {
		return ""
	}
	const shown = 5
	var names []string
	for i, l := range sel.LeftOut {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(sel.LeftOut)-shown))
			break
		}
		names = append(names, l.Path)
	}
	return "Left out: " + strings.Join(names, ", ") + " (`tori deploy --dry-run` lists what is sent and why)"
}
