package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
)

func (s *state) domainsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "domains",
		Short:   "List, add and remove custom hostnames of a static app",
		Example: "  tori domains add www.example.com\n  tori domains list",
	}
	s.appFlag(c, true)
	c.AddCommand(&cobra.Command{
		Use:     "list",
		Short:   "List hostnames, their HTTPS certificates and the TXT record each needs",
		Example: "  tori domains list --app my-site",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.Domain, api.Raw, error) {
				return s.client.ListDomains(ctx, slug)
			}, func(ds []api.Domain) error {
				w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, s.ui.Paint(ui.Bold, "HOSTNAME\tSTATUS\tCERTIFICATE\tTXT NAME\tTXT VALUE"))
				for _, d := range ds {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", d.Hostname, d.Status, d.Certificate.Summary(), d.Verification.Name, d.Verification.Value)
				}
				if err := w.Flush(); err != nil {
					return err
				}
				// The CA's reason, under the table: too long for a column.
				for _, d := range ds {
					if c := d.Certificate; c != nil && c.LastError != nil {
						s.ui.Printf("%s: certificate %s: %s\n", d.Hostname, c.Status, *c.LastError)
					}
				}
				return nil
			})
		},
	}, &cobra.Command{
		Use:     "add HOSTNAME",
		Short:   "Add a hostname and print the TXT record that proves it is yours",
		Example: "  tori domains add www.example.com --app my-site",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Domain, api.Raw, error) {
				return s.client.AddDomain(ctx, slug, args[0])
			}, func(d api.Domain) error {
				s.ui.Printf("Added %s (%s). Create this DNS record:\n  %s  %s  %q\n", d.Hostname, d.Status, d.Verification.Type, d.Verification.Name, d.Verification.Value)
				return nil
			})
		},
	}, &cobra.Command{
		Use:     "remove HOSTNAME",
		Short:   "Remove a hostname (asks for it again unless --yes)",
		Example: "  tori domains remove www.example.com --yes",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE:    s.removeFromApp("", (*api.Client).RemoveDomain),
	})
	return c
}
