package commands

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/ui"
)

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
