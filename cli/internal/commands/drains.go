package commands

import (
	"context"
	"fmt"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
)

// CheckDrainURL refuses before sending what the API refuses for its shape: a drain is
// https:// (signed NDJSON) or syslog+tls:// (RFC 5424 over TLS) with a host. Whether the host
// may be reached (never a private address) is the API's to say.
func CheckDrainURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%q is not a drain URL: want https://host/path or syslog+tls://host:port", raw)
	}
	switch u.Scheme {
	case "https", "syslog+tls":
		return nil
	case "http", "syslog":
		return fmt.Errorf("%q: drains send over TLS only; use https:// or syslog+tls://", raw)
	}
	return fmt.Errorf("%q: want an https:// or syslog+tls:// URL", raw)
}

func (s *state) drainsCmd() *cobra.Command {
	list := func(cmd *cobra.Command, _ []string) error {
		return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.Drain, api.Raw, error) {
			return s.client.ListDrains(ctx, slug)
		}, s.printDrains)
	}
	c := &cobra.Command{
		Use:   "drains",
		Short: "Send the app's log lines to your own collector (admins)",
		Long: "A drain sends every log line of the app, within about a second, to an https:// endpoint (NDJSON,\n" +
			"signed with Tori-Signature: sha256=HMAC(secret, body)) or a syslog+tls:// one (RFC 5424).\n" +
			"Lines a slow or failing receiver could not take are counted (DROPPED 24H) and said in the\n" +
			"app's own log. Alone, `tori drains` lists them.",
		Example: "  tori drains\n  tori drains add https://collector.example.com/tori\n  tori drains test 0193…\n  tori drains rm 0193… --yes",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE:    list,
	}
	s.appFlag(c, true)
	c.AddCommand(&cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the app's drains with their state and last day's counts",
		Example: "  tori drains ls --app my-api",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE:    list,
	}, &cobra.Command{
		Use:     "add URL",
		Short:   "Add a drain; an https one's signing secret is printed this once",
		Example: "  tori drains add https://collector.example.com/tori\n  tori drains add syslog+tls://logs.example.com:6514",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := CheckDrainURL(args[0]); err != nil {
				return usageError{err}
			}
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.DrainCreated, api.Raw, error) {
				return s.client.CreateDrain(ctx, slug, args[0])
			}, func(d api.DrainCreated) error {
				s.ui.Printf("Added drain %s (%s) to %s.\n", d.ID, d.Kind, d.URL)
				if d.Secret != "" {
					fmt.Fprintf(s.env.Stderr, "%s the signing secret is shown this once; keep it where your receiver checks Tori-Signature:\n",
						s.ui.PaintErr(ui.Yellow, "Note:"))
					// Alone on its line on stdout, so `| tail -1` keeps it.
					fmt.Fprintln(s.env.Stdout, d.Secret)
				}
				return nil
			})
		},
	}, &cobra.Command{
		Use:     "rm ID",
		Aliases: []string{"remove", "delete"},
		Short:   "Remove a drain (asks for its id again unless --yes)",
		Example: "  tori drains rm 0193… --yes",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE:    s.removeFromApp("drain", (*api.Client).DeleteDrain),
	}, &cobra.Command{
		Use:     "test ID",
		Short:   "Send one test line to a drain now and show how the receiver answered",
		Example: "  tori drains test 0193…",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			r, raw, err := s.client.TestDrain(cmd.Context(), slug, args[0])
			if err != nil {
				return err
			}
			if s.json {
				if err := s.printJSON(raw); err != nil {
					return err
				}
			} else if r.Delivered {
				s.ui.Printf("Delivered: the receiver answered %d.\n", r.Status)
			}
			if !r.Delivered {
				if s.json {
					return errQuiet
				}
				return fmt.Errorf("not delivered to drain %s: %s", args[0], r.Error)
			}
			return nil
		},
	})
	return c
}

func (s *state) printDrains(ds []api.Drain) error {
	if len(ds) == 0 {
		s.ui.Printf("No drains. Add one with tori drains add https://….\n")
		return nil
	}
	opt := func(p *string) string {
		if p == nil || *p == "" {
			return "-"
		}
		return *p
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, s.ui.Paint(ui.Bold, "ID\tKIND\tSTATUS\tURL\tDELIVERED 24H\tDROPPED 24H\tLAST DELIVERY\tLAST ERROR"))
	for _, d := range ds {
		status := d.Status
		if status == "failing" {
			status = s.ui.Paint(ui.Red, status)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", d.ID, d.Kind, status, d.URL, d.Delivered24h, d.Dropped24h, opt(d.LastDeliveryAt), opt(d.LastError))
	}
	return w.Flush()
}
