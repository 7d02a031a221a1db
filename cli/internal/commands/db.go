package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
)

// dbCmd is the app's managed Postgres, as Heroku's pg commands are: its password never shows
// here; it reaches the app as DATABASE_URL.
func (s *state) dbCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "db",
		Short:   "The app's managed Postgres: create, status, delete, dumps and restores",
		Example: "  tori db create\n  tori db status\n  tori db dump",
	}
	s.appFlag(c, true)
	// showDB runs one database operation and prints the database it answers.
	showDB := func(op *api.Operation, done string) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Database, api.Raw, error) {
				return s.client.Database(ctx, op, slug)
			}, func(d api.Database) error {
				if done != "" {
					s.ui.Printf("%s\n", done)
				}
				s.printDatabase(d)
				return nil
			})
		}
	}
	c.AddCommand(&cobra.Command{
		Use:     "create",
		Short:   "Create the app's database (service apps); DATABASE_URL is set once it is ready",
		Example: "  tori db create --app my-api",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE:    showDB(api.OpCreateDB, "Creating the database; `tori db status` shows when it is ready."),
	}, &cobra.Command{
		Use:     "status",
		Short:   "Show the database's status",
		Example: "  tori db status --app my-api",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE:    showDB(api.OpGetDB, ""),
	}, &cobra.Command{
		Use:     "rotate",
		Short:   "Give the database a new password; the old one works until the next deploy is live or 24 hours",
		Example: "  tori db rotate --app my-api",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE:    showDB(api.OpRotateDB, "Rotating the password; DATABASE_URL follows, and the next deploy uses it."),
	}, &cobra.Command{
		Use:     "delete",
		Short:   "Delete the database, its dumps and restores (asks for the app's name unless --yes)",
		Example: "  tori db delete --app my-api --yes",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			if err := s.confirm("delete the database of "+slug, slug); err != nil {
				return err
			}
			return showDB(api.OpDeleteDB, "Deleting the database.")(cmd, args)
		},
	}, &cobra.Command{
		Use:     "dumps",
		Short:   "List the database's dumps, newest first",
		Example: "  tori db dumps --app my-api",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.Dump, api.Raw, error) {
				return s.client.ListDumps(ctx, slug)
			}, func(ds []api.Dump) error {
				if len(ds) == 0 {
					s.ui.Printf("No dumps yet: one is taken every night, or now with `tori db dump`.\n")
					return nil
				}
				w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, s.ui.Paint(ui.Bold, "ID\tSTATUS\tSIZE\tCREATED"))
				for _, d := range ds {
					fmt.Fprintf(w, "%s\t%s\t%d B\t%s\n", d.ID, d.Status, d.SizeBytes, d.CreatedAt)
				}
				return w.Flush()
			})
		},
	}, &cobra.Command{
		Use:     "dump",
		Short:   "Take a dump now (it counts toward the seven kept)",
		Example: "  tori db dump --app my-api",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Dump, api.Raw, error) {
				return s.client.TakeDump(ctx, slug)
			}, func(d api.Dump) error {
				s.ui.Printf("Dump %s %s; `tori db dumps` shows when it is done.\n", d.ID, d.Status)
				return nil
			})
		},
	}, &cobra.Command{
		Use:     "restore DUMP_ID",
		Short:   "Restore a dump into a database of its own (DATABASE_RESTORE_URL); the live one is untouched",
		Example: "  tori db restore 0192f5a4-7c1e-7d3a-9b2e-4f5a6b7c8d9e --app my-api",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Restore, api.Raw, error) {
				return s.client.RestoreDump(ctx, slug, args[0])
			}, func(r api.Restore) error {
				s.ui.Printf("Restore %s of dump %s %s; DATABASE_RESTORE_URL is set once it is ready.\n", r.ID, r.DumpID, r.Status)
				return nil
			})
		},
	})
	return c
}

func (s *state) printDatabase(d api.Database) {
	s.ui.Printf("Database %s: %s\n", d.ID, s.ui.Paint(ui.Bold, d.Status))
	if d.Message != nil && *d.Message != "" {
		s.ui.Printf("  %s\n", *d.Message)
	}
}
