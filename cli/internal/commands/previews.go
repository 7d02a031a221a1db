package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/bundle"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/names"
)

// PreviewFlags are `tori deploy`'s preview flags, as typed.
type PreviewFlags struct {
	Name, TTL, Database string
	Env                 []string
}

// ParseDuration reads a duration flag: a Go duration (90m, 1h30m) or whole days (2d).
func ParseDuration(flag, v string) (time.Duration, error) {
	d, err := ParseSince(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a duration such as 30m, 48h or 7d", flag, v)
	}
	return d, nil
}

// ParseTTL is a preview's --ttl in whole seconds, at least a minute (the API's floor; its
// ceiling is the plan's, which the API applies by capping).
func ParseTTL(v string) (int, error) {
	d, err := ParseDuration("--ttl", v)
	if err != nil {
		return 0, err
	}
	if d < time.Minute {
		return 0, fmt.Errorf("--ttl %q: a preview lives at least 1m", v)
	}
	return int(d / time.Second), nil
}

// ParsePreviewFlags checks the preview flags before anything is sent: nil without --preview
// (and then the other preview flags are a mistake), else the preview's options. The API's
// defaults stay the API's: nothing is sent for a flag not given.
func ParsePreviewFlags(f PreviewFlags) (*api.PreviewOptions, error) {
	if f.Name == "" {
		if f.TTL != "" || len(f.Env) > 0 || f.Database != "" {
			return nil, fmt.Errorf("--ttl, --env and --database go with --preview NAME")
		}
		return nil, nil
	}
	if !names.ValidPreviewName(f.Name) {
		return nil, fmt.Errorf("--preview %q: a preview's name is lowercase letters, digits and -, at most 20", f.Name)
	}
	o := &api.PreviewOptions{Name: f.Name}
	if f.TTL != "" {
		ttl, err := ParseTTL(f.TTL)
		if err != nil {
			return nil, err
		}
		o.TTLSeconds = ttl
	}
	switch f.Database {
	case "", "none", "shared":
		o.Database = f.Database
	default:
		return nil, fmt.Errorf("--database %q: want none (no DATABASE_URL, the default) or shared (the app's own database)", f.Database)
	}
	for _, kv := range f.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		if !names.ValidEnvKey(k) {
			return nil, fmt.Errorf("--env %q: %q is not a variable name (A-Z, 0-9 and _, starting with a letter)", kv, k)
		}
		if (k == "DATABASE_URL" || k == "DATABASE_RESTORE_URL") && f.Database != "shared" {
			return nil, fmt.Errorf("--env %s: a preview without --database shared has no database variables to override", k)
		}
		if o.Env == nil {
			o.Env = map[string]string{}
		}
		o.Env[k] = v // the last of a repeated key wins, as `tori env set`
	}
	return o, nil
}

// PreviewFields are a folder preview's form parts: its options, env as one JSON object.
func PreviewFields(o api.PreviewOptions) []bundle.Field {
	fields := []bundle.Field{{Name: "name", Value: o.Name}}
	if o.TTLSeconds > 0 {
		fields = append(fields, bundle.Field{Name: "ttlSeconds", Value: fmt.Sprint(o.TTLSeconds)})
	}
	if len(o.Env) > 0 {
		b, _ := json.Marshal(o.Env)
		fields = append(fields, bundle.Field{Name: "env", Value: string(b)})
	}
	if o.Database != "" {
		fields = append(fields, bundle.Field{Name: "database", Value: o.Database})
	}
	return fields
}

// afterPreview prints a new (or replaced) preview and, unless detached, follows its revision
// until it serves (exit 0, its URL on stdout) or fails (exit 1).
func (s *state) afterPreview(ctx context.Context, slug string, p api.Preview, raw api.Raw, detach bool) error {
	if detach {
		if s.json {
			return s.printJSON(raw)
		}
		s.ui.Printf("Preview %s accepted (%s): %s\nFollow it with `tori previews --app %s`.\n", p.Name, p.Status, p.URL, slug)
		return nil
	}
	if !s.json {
		fmt.Fprintf(s.env.Stderr, "Preview %s %s\n", p.Name, s.statusWord(p.Status))
	}
	final, finalRaw, err := watchUntil(s, ctx, slug, watched[api.Preview]{
		what: "Preview " + p.Name, deployID: p.DeployID, createdAt: p.UpdatedAt,
		poll:     func(ctx context.Context) (api.Preview, api.Raw, error) { return s.client.GetPreview(ctx, slug, p.ID) },
		status:   func(p api.Preview) string { return p.Status },
		terminal: api.Preview.Settled,
		stopped:  fmt.Sprintf("the preview goes on: `tori previews --app %s`", slug),
	}, p, raw)
	if err != nil {
		return err
	}
	if s.json {
		if err := s.printJSON(finalRaw); err != nil {
			return err
		}
	}
	if final.Status == "ready" {
		if !s.json {
			s.ui.Printf("%s %s (until %s)\n", s.ui.Paint(ui.Green, "Preview:"), final.URL, final.ExpiresAt)
		}
		return nil
	}
	if s.json {
		return errQuiet
	}
	reason := final.Status
	if final.Error != nil {
		reason += ": " + final.Error.Message
	}
	return fmt.Errorf("preview %s %s", final.Name, reason)
}

func (s *state) previewsCmd() *cobra.Command {
	list := func(cmd *cobra.Command, _ []string) error {
		return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.Preview, api.Raw, error) {
			return s.client.ListPreviews(ctx, slug)
		}, s.printPreviews)
	}
	c := &cobra.Command{
		Use:   "previews",
		Short: "List, extend, promote and remove an app's previews",
		Long: "A preview is a deploy at its own URL (tori deploy --preview NAME) that never touches the live\n" +
			"app. NAME or the preview's id names it here. Alone, `tori previews` lists them.",
		Example: "  tori previews\n  tori previews ttl pr-12 24h\n  tori previews promote pr-12\n  tori previews rm pr-12 --yes",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE:    list,
	}
	s.appFlag(c, true)
	c.AddCommand(&cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the app's previews with their URLs and when they end",
		Example: "  tori previews ls --app my-site",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE:    list,
	}, &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove", "delete"},
		Short:   "Remove a preview: its URL answers 410 from then on (asks for its name again unless --yes)",
		Example: "  tori previews rm pr-12 --yes",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE:    s.removeFromApp("preview", (*api.Client).DeletePreview),
	}, &cobra.Command{
		Use:     "ttl NAME DURATION",
		Short:   "Make a preview end DURATION from now (capped by the plan)",
		Example: "  tori previews ttl pr-12 24h\n  tori previews ttl pr-12 7d",
		Args:    cobra.ExactArgs(2),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			ttl, err := ParseTTL(args[1])
			if err != nil {
				return usageError{err}
			}
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Preview, api.Raw, error) {
				return s.client.SetPreviewTTL(ctx, slug, args[0], ttl)
			}, func(p api.Preview) error {
				note := ""
				if p.TTLSeconds < ttl {
					note = fmt.Sprintf(" (capped by the plan at %s)", time.Duration(p.TTLSeconds)*time.Second)
				}
				s.ui.Printf("Preview %s now ends at %s%s.\n", p.Name, p.ExpiresAt, note)
				return nil
			})
		},
	}, &cobra.Command{
		Use:     "promote NAME",
		Short:   "Make a preview live: a deploy of its payload with the app's live variables",
		Example: "  tori previews promote pr-12",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Deploy, api.Raw, error) {
				return s.client.PromotePreview(ctx, slug, args[0])
			}, func(d api.Deploy) error {
				s.ui.Printf("Promoted preview %s: deploy %s (%s). Follow it with `tori deploys show %s`.\n", args[0], d.ID, d.Status, d.ID)
				return nil
			})
		},
	})
	return c
}

func (s *state) printPreviews(ps []api.Preview) error {
	if len(ps) == 0 {
		s.ui.Printf("No previews. Make one with tori deploy --preview NAME.\n")
		return nil
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, s.ui.Paint(ui.Bold, "NAME\tID\tSTATUS\tURL\tEXPIRES"))
	for _, p := range ps {
		status := p.Status
		if p.Error != nil && p.Error.Message != "" {
			status += ": " + p.Error.Message
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.ID, status, p.URL, p.ExpiresAt)
	}
	return w.Flush()
}
