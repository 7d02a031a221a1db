package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/bundle"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/names"
)

func (s *state) appsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "apps",
		Aliases: []string{"app"},
		Short:   "List, create, show and delete apps (`tori apps` alone lists them)",
		Example: "  tori apps list\n  tori apps create my-api --kind service\n  tori app show my-api\n  tori apps delete my-api",
		Args:    cobra.NoArgs,
	}
	var kind, region string
	create := &cobra.Command{
		Use:     "create [NAME]",
		Short:   "Create an app (static unless --kind service); NAME is its slug, generated when left out",
		Example: "  tori apps create my-site\n  tori apps create my-api --kind service --region us\n  tori apps create shop --team acme",
		Args:    cobra.MaximumNArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := api.AppCreate{Kind: kind, Region: region, Team: s.team()}
			if len(args) == 1 {
				in.Name = args[0]
			}
			app, raw, err := s.client.CreateApp(cmd.Context(), in)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			s.ui.Printf("Created %s app %s in %s%s: %s\n", app.Kind, s.ui.Paint(ui.Bold, app.Slug), app.Region, inTeam(app.Team), app.URL)
			return nil
		},
	}
	create.Flags().StringVar(&kind, "kind", "static", "static or service")
	create.Flags().StringVar(&region, "region", "", "eu or us (default: the account's)")
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the apps of every team you are in (--team: one team's)",
		Example: "  tori apps list\n  tori apps list --team acme\n  tori apps list --json",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			apps, raw, err := s.client.ListApps(cmd.Context(), s.team())
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			if len(apps) == 0 {
				s.ui.Println("No apps yet: `tori apps create NAME`.")
				return nil
			}
			w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, s.ui.Paint(ui.Bold, "SLUG\tTEAM\tKIND\tSTATUS\tREGION\tURL"))
			for _, a := range apps {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Slug, dash(a.Team), a.Kind, a.Status, a.Region, a.URL)
			}
			return w.Flush()
		},
	}
	// `tori apps` lists, as `heroku apps` and `fly apps` do.
	c.PreRunE, c.RunE = list.PreRunE, list.RunE
	c.AddCommand(list, create, s.appFlag(&cobra.Command{
		Use:               "show [SLUG]",
		Short:             "Show an app",
		Example:           "  tori apps show my-site\n  tori apps show --app my-site --json",
		Args:              cobra.MaximumNArgs(1),
		PreRunE:           s.signedIn,
		ValidArgsFunction: s.completeAppArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slugArg(args)
			if err != nil {
				return err
			}
			app, raw, err := s.client.GetApp(cmd.Context(), slug)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			current := "none"
			if app.CurrentDeployID != nil {
				current = *app.CurrentDeployID
			}
			w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
			for _, kv := range [][2]string{{"Slug", app.Slug}, {"Team", dash(app.Team)}, {"Kind", app.Kind}, {"Status", app.Status}, {"Framework", app.Framework},
				{"Region", app.Region + " (" + app.Zone + ")"}, {"URL", app.URL}, {"Live deploy", current}, {"Created", app.CreatedAt}} {
				fmt.Fprintf(w, "%s\t%s\n", s.ui.Paint(ui.Bold, kv[0]+":"), kv[1])
			}
			return w.Flush()
		},
	}, false), s.appFlag(&cobra.Command{
		Use:               "delete [SLUG]",
		Short:             "Delete an app (asks for its slug unless --yes)",
		Example:           "  tori apps delete my-site\n  tori apps delete my-site --yes",
		Args:              cobra.MaximumNArgs(1),
		PreRunE:           s.signedIn,
		ValidArgsFunction: s.completeAppArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slugArg(args)
			if err != nil {
				return err
			}
			if err := s.confirm("delete the app "+slug+" and stop serving it", slug); err != nil {
				return err
			}
			res, raw, err := s.client.DeleteApp(cmd.Context(), slug)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			if res.Reclaimed {
				s.ui.Printf("Deleted %s.\n", slug)
			} else {
				s.ui.Printf("Deleted %s: serving stopped; cleanup continues in the background.\n", slug)
			}
			return nil
		},
	}, false))
	return c
}

// slugArg is a positional SLUG, else --app, else tori.json.
func (s *state) slugArg(args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	return s.slug()
}

func (s *state) initCmd() *cobra.Command {
	var kind, name string
	c := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Link a folder to an app in its tori.json, creating the app unless --app names one",
		Long: "Writes the app's slug into DIR/tori.json (the folder, by default the current one), keeping\n" +
			"whatever else the file holds, so later commands there need no --app.",
		Example: "  tori init --app my-site\n  tori init --name my-api --kind service",
		Args:    cobra.MaximumNArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			m, err := readManifest(dir)
			if err != nil {
				return err
			}
			var raw api.Raw
			var app api.App
			if s.app != "" {
				app, raw, err = s.client.GetApp(cmd.Context(), s.app)
			} else {
				if name == "" {
					abs, _ := filepath.Abs(dir)
					if base := strings.ToLower(filepath.Base(abs)); names.ValidSlug(base) {
						name = base
					}
				}
				app, raw, err = s.client.CreateApp(cmd.Context(), api.AppCreate{Name: name, Kind: kind, Team: s.team()})
			}
			if err != nil {
				return err
			}
			m["app"] = app.Slug
			b, _ := json.MarshalIndent(m, "", "  ")
			if err := os.WriteFile(filepath.Join(dir, bundle.Manifest), append(b, '\n'), 0o644); err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			s.ui.Printf("Linked %s to %s app %s.\n", filepath.Join(dir, bundle.Manifest), app.Kind, s.ui.Paint(ui.Bold, app.Slug))
			return nil
		},
	}
	c.Flags().StringVarP(&s.app, "app", "a", "", "link to this existing app instead of creating one")
	c.RegisterFlagCompletionFunc("app", s.completeApps)
	c.Flags().StringVar(&kind, "kind", "static", "for a new app: static or service")
	c.Flags().StringVar(&name, "name", "", "for a new app: its slug (default: the folder's name, when it is a valid slug)")
	return c
}

func (s *state) openCmd() *cobra.Command {
	return s.appFlag(&cobra.Command{
		Use:     "open",
		Short:   "Open the app's URL in a browser",
		Example: "  tori open --app my-site",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.App, api.Raw, error) {
				return s.client.GetApp(ctx, slug)
			}, func(app api.App) error {
				s.browse(app.URL)
				s.ui.Println(app.URL)
				return nil
			})
		},
	}, false)
}
