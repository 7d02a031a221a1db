package commands

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/follow"
	"tori.dev/cli/internal/ui"
)

// ParseSince reads a --since value: a Go duration (90m, 1h30m) or whole days (2d).
func ParseSince(v string) (time.Duration, error) {
	if strings.HasSuffix(v, "d") {
		n, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
		if err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--since %q: want a duration such as 30m, 1h or 2d", v)
	}
	return d, nil
}

func (s *state) logsCmd() *cobra.Command {
	var since string
	var followFlag bool
	c := &cobra.Command{
		Use:   "logs",
		Short: "Print the app's log lines, and with --follow keep printing new ones",
		Long: "Prints the lines of the last --since (default 1h), oldest first. --follow keeps polling;\n" +
			"each line is printed once, and a line that reaches the logs up to 10 s after its own\n" +
			"timestamp is not missed. --json prints one JSON line (the API's entry) per log line.",
		Example: "  tori logs --app my-api\n  tori logs --since 15m --follow\n  tori logs --since 2d --json | jq .message",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			slug, err := s.slug()
			if err != nil {
				return err
			}
			window, err := ParseSince(since)
			if err != nil {
				return err
			}
			f := follow.New(time.Now().Add(-window))
			fetch := func(ctx context.Context, q api.LogQuery) (api.LogPage, error) {
				p, _, err := s.client.Logs(ctx, slug, q)
				return p, err
			}
			for {
				lines, err := f.Poll(ctx, fetch, time.Now())
				for _, e := range lines {
					if s.json {
						b, _ := json.Marshal(e)
						fmt.Fprintln(s.env.Stdout, string(b))
					} else {
						s.printLine(e, true)
					}
				}
				if err != nil {
					return err
				}
				if !followFlag {
					return nil
				}
				if err := s.sleep(ctx, s.pollEvery()); err != nil {
					if errors.Is(err, context.Canceled) {
						return nil
					}
					return err
				}
			}
		},
	}
	c.Flags().StringVar(&since, "since", "1h", "how far back to start (30m, 1h, 2d)")
	c.Flags().BoolVarP(&followFlag, "follow", "f", false, "keep printing new lines")
	return c
}

var envKey = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// ParseAssignments reads `set` arguments: KEY=VALUE pairs, or one KEY followed by "-",
// whose value is standard input (one trailing newline dropped).
func ParseAssignments(args []string, stdin io.Reader) ([][2]string, error) {
	if len(args) == 2 && args[1] == "-" && !strings.Contains(args[0], "=") {
		if !envKey.MatchString(args[0]) {
			return nil, fmt.Errorf("%q is not a variable name (A-Z, 0-9, _; starting with a letter)", args[0])
		}
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, err
		}
		v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		return [][2]string{{args[0], v}}, nil
	}
	var out [][2]string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want KEY=VALUE (or KEY - to read the value from standard input)", a)
		}
		if !envKey.MatchString(k) {
			return nil, fmt.Errorf("%q is not a variable name (A-Z, 0-9, _; starting with a letter)", k)
		}
		out = append(out, [2]string{k, v})
	}
	if len(out) == 0 {
		return nil, errors.New("nothing to set: KEY=VALUE…")
	}
	return out, nil
}

// ParseDotenv reads a .env file: KEY=VALUE lines, `export ` allowed, # comments, values
// optionally in single quotes (taken as they are) or double quotes (\n, \" and \\ escapes).
func ParseDotenv(r io.Reader) ([][2]string, error) {
	var out [][2]string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !envKey.MatchString(k) {
			return nil, fmt.Errorf("line %d: want KEY=VALUE", n)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			v = v[1 : len(v)-1]
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			v = strings.NewReplacer(`\n`, "\n", `\"`, `"`, `\\`, `\`).Replace(v[1 : len(v)-1])
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		out = append(out, [2]string{k, v})
	}
	return out, sc.Err()
}

func (s *state) envCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "env",
		Short: "List, set, unset and import environment variables (values are shown masked)",
		Example: "  tori env list\n  tori env set API_KEY=s3cret DEBUG=0\n  tori env set TLS_KEY - < key.pem\n" +
			"  tori env unset DEBUG\n  tori env import .env",
	}
	set := func(ctx context.Context, slug string, pairs [][2]string) error {
		var raws []json.RawMessage
		for _, kv := range pairs {
			_, raw, err := s.client.SetEnv(ctx, slug, kv[0], kv[1])
			if err != nil {
				return fmt.Errorf("%s: %w", kv[0], err)
			}
			raws = append(raws, json.RawMessage(raw))
			if !s.json {
				s.ui.Printf("Set %s.\n", kv[0])
			}
		}
		if s.json {
			b, _ := json.Marshal(raws)
			return s.printJSON(b)
		}
		fmt.Fprintln(s.env.Stderr, "A service picks up changes with its next deploy.")
		return nil
	}
	c.AddCommand(&cobra.Command{
		Use:     "list",
		Short:   "List variables, values masked",
		Example: "  tori env list --app my-api",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.EnvVar, api.Raw, error) {
				return s.client.ListEnv(ctx, slug)
			}, func(vars []api.EnvVar) error {
				w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
				for _, v := range vars {
					fmt.Fprintf(w, "%s\t%s\n", s.ui.Paint(ui.Bold, v.Key), v.Value)
				}
				return w.Flush()
			})
		},
	}, &cobra.Command{
		Use:     "set KEY=VALUE… | set KEY -",
		Short:   "Set variables; `KEY -` reads the value from standard input",
		Example: "  tori env set API_KEY=s3cret DEBUG=0\n  printf %s \"$SECRET\" | tori env set API_KEY -",
		Args:    cobra.MinimumNArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			pairs, err := ParseAssignments(args, s.env.Stdin)
			if err != nil {
				return err
			}
			return set(cmd.Context(), slug, pairs)
		},
	}, &cobra.Command{
		Use:     "unset KEY…",
		Short:   "Remove variables",
		Example: "  tori env unset DEBUG OLD_KEY",
		Args:    cobra.MinimumNArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			for _, k := range args {
				if err := s.client.UnsetEnv(cmd.Context(), slug, k); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				if !s.json {
					s.ui.Printf("Unset %s.\n", k)
				}
			}
			if s.json {
				return s.printJSON(api.Raw(`{"ok":true}`))
			}
			return nil
		},
	}, &cobra.Command{
		Use:     "import FILE",
		Short:   "Set every variable of a .env file",
		Example: "  tori env import .env.production --app my-api",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			fh, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer fh.Close()
			pairs, err := ParseDotenv(fh)
			if err != nil {
				return fmt.Errorf("%s: %v", args[0], err)
			}
			if len(pairs) == 0 {
				return fmt.Errorf("%s holds no variables", args[0])
			}
			return set(cmd.Context(), slug, pairs)
		},
	})
	return c
}

func (s *state) domainsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "domains",
		Short:   "List, add and remove custom hostnames of a static app",
		Example: "  tori domains add www.example.com\n  tori domains list",
	}
	c.AddCommand(&cobra.Command{
		Use:     "list",
		Short:   "List hostnames and the TXT record each needs",
		Example: "  tori domains list --app my-site",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.Domain, api.Raw, error) {
				return s.client.ListDomains(ctx, slug)
			}, func(ds []api.Domain) error {
				w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, s.ui.Paint(ui.Bold, "HOSTNAME\tSTATUS\tTXT NAME\tTXT VALUE"))
				for _, d := range ds {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", d.Hostname, d.Status, d.Verification.Name, d.Verification.Value)
				}
				return w.Flush()
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
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			if err := s.confirm("remove "+args[0]+" from "+slug, args[0]); err != nil {
				return err
			}
			if err := s.client.RemoveDomain(cmd.Context(), slug, args[0]); err != nil {
				return err
			}
			if s.json {
				return s.printJSON(api.Raw(`{"ok":true}`))
			}
			s.ui.Printf("Removed %s.\n", args[0])
			return nil
		},
	})
	return c
}

func (s *state) billingCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "billing",
		Short:   "Show the plan, subscription and any payment hold",
		Example: "  tori billing\n  tori billing --json",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, raw, err := s.client.Billing(cmd.Context())
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			s.ui.Printf("%s %s\n", s.ui.Paint(ui.Bold, "Plan:"), b.Plan)
			if sub := b.Subscription; sub != nil {
				ends := "renews"
				if sub.CancelAtPeriodEnd {
					ends = "ends"
				}
				s.ui.Printf("%s %s, %sly, %s; %s %s\n", s.ui.Paint(ui.Bold, "Subscription:"), sub.Plan, sub.Interval, sub.Status, ends, sub.CurrentPeriodEnd)
			} else {
				s.ui.Printf("%s none\n", s.ui.Paint(ui.Bold, "Subscription:"))
			}
			if h := b.Hold; h != nil {
				s.ui.Printf("%s %s since %s: deploys refused from %s, serving stops from %s\n",
					s.ui.Paint(ui.Red, "Payment hold:"), h.Stage, h.Since, h.DeploysRefusedFrom, h.ServingStopsFrom)
			}
			if !b.Configured {
				s.ui.Println("Paid plans are not available yet.")
			}
			return nil
		},
	}
}

func (s *state) plansCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "plans",
		Short:   "List the plans, their prices and limits",
		Example: "  tori plans\n  tori plans --json | jq '.plans[].name'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := s.connect(false); err != nil {
				return err
			}
			c, raw, err := s.client.Plans(cmd.Context())
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, s.ui.Paint(ui.Bold, "PLAN\tMONTH\tYEAR\tAPPS\tDOMAINS\tDEPLOYS\tUPLOAD\tCPU\tLOGS"))
			for _, p := range c.Plans {
				fmt.Fprintf(w, "%s\t%g %s\t%g %s\t%d\t%d\t%d\t%s\t%g\t%dd\n", p.Name, p.Prices.Month, c.Billing.Currency, p.Prices.Year, c.Billing.Currency,
					p.Limits.Apps, p.Limits.CustomDomains, p.Limits.ConcurrentDeploys, ui.Bytes(p.Limits.UploadBytes), p.Limits.CPU, p.Limits.LogRetentionDays)
			}
			return w.Flush()
		},
	}
}
