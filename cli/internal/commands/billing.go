package commands

import (
	"github.com/spf13/cobra"

	"tori.dev/cli/internal/ui"
)

func (s *state) billingCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "billing",
		Short:   "Show the plan, subscription and any payment hold",
		Example: "  tori billing\n  tori billing --json",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, raw, err := s.client.Billing(cmd.Context(), s.team())
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
