package commands

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/names"
)

// cronShorthands are the @-schedules the API takes besides five fields.
var cronShorthands = map[string]bool{
	"@hourly": true, "@daily": true, "@midnight": true, "@weekly": true, "@monthly": true, "@yearly": true, "@annually": true,
}

// CronFlags are `tori cron add`'s flags, as typed.
type CronFlags struct {
	Schedule, Timezone, Command, Policy string
	Timeout                             int
}

// ParseCronAdd checks `cron add NAME` and its flags before anything is sent: the name's
// shape, a schedule of five fields or an @-shorthand, a command, a known policy and a
// positive timeout. Whether the schedule's fields, the time zone and the timeout fit is the
// API's to say (its message names the field).
func ParseCronAdd(name string, f CronFlags) (api.CronJobCreate, error) {
	if !names.ProcessName(name) {
		return api.CronJobCreate{}, fmt.Errorf("%q is not a cron job name: lowercase letters, digits and -, starting with a letter, at most 30", name)
	}
	schedule := strings.Join(strings.Fields(f.Schedule), " ")
	switch n := len(strings.Fields(schedule)); {
	case schedule == "":
		return api.CronJobCreate{}, fmt.Errorf("--schedule is required, as in --schedule '0 3 * * *'")
	case strings.HasPrefix(schedule, "@"):
		if !cronShorthands[schedule] {
			return api.CronJobCreate{}, fmt.Errorf("--schedule %q: the shorthands are @hourly, @daily, @weekly, @monthly and @yearly", f.Schedule)
		}
	case n != 5:
		return api.CronJobCreate{}, fmt.Errorf("--schedule %q has %d fields; want 5: minute hour day-of-month month day-of-week", f.Schedule, n)
	}
	if strings.TrimSpace(f.Command) == "" {
		return api.CronJobCreate{}, fmt.Errorf("--command is required: what to run, through /bin/sh -c")
	}
	switch f.Policy {
	case "", "forbid", "replace", "allow":
	default:
		return api.CronJobCreate{}, fmt.Errorf("--policy %q: want forbid (skip a tick while a run is under way), replace or allow", f.Policy)
	}
	if f.Timeout < 0 {
		return api.CronJobCreate{}, fmt.Errorf("--timeout must be a number of seconds, 1 or more")
	}
	return api.CronJobCreate{Name: name, Schedule: schedule, Timezone: strings.TrimSpace(f.Timezone), Command: f.Command,
		ConcurrencyPolicy: f.Policy, TimeoutSeconds: f.Timeout}, nil
}

func cronName(name string) error {
	if !names.ProcessName(name) {
		return usagef("%q is not a cron job name: lowercase letters, digits and -, starting with a letter, at most 30", name)
	}
	return nil
}

func (s *state) cronCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "cron",
		Short: "Add, list, remove and run an app's cron jobs, and list their runs",
		Long: "A cron job runs a command on a schedule in a fresh sandbox from the live deploy, with its\n" +
			"environment. The schedule is read in --timezone (default UTC); across daylight saving a job\n" +
			"at a fixed hour and minute runs once (and at the next valid time on a skipped hour). Every\n" +
			"due tick leaves a run, skipped ones with their reason (overlap, missed, disabled, hold).",
		Example: "  tori cron add nightly --schedule '0 3 * * *' --timezone Europe/Prague --command 'python3 report.py'\n" +
			"  tori cron ls\n  tori cron run nightly\n  tori cron runs nightly\n  tori cron rm nightly --yes",
	}
	s.appFlag(c, true)

	var f CronFlags
	add := &cobra.Command{
		Use:   "add NAME --schedule SPEC --command CMD",
		Short: "Add a cron job",
		Example: "  tori cron add nightly --schedule '0 3 * * *' --timezone Europe/Prague --command 'python3 report.py'\n" +
			"  tori cron add sweep --schedule @hourly --command './sweep' --policy replace --timeout 300",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := ParseCronAdd(args[0], f)
			if err != nil {
				return usageError{err}
			}
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.CronJob, api.Raw, error) {
				return s.client.CreateCronJob(ctx, slug, in)
			}, func(j api.CronJob) error {
				s.ui.Printf("Added cron job %s: %s (%s), next run %s.\n", j.Name, j.Schedule, j.Timezone, nextRun(j))
				return nil
			})
		},
	}
	af := add.Flags()
	af.StringVar(&f.Schedule, "schedule", "", "five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly")
	af.StringVar(&f.Timezone, "timezone", "", "IANA time zone the schedule is read in, such as Europe/Prague (default UTC)")
	af.StringVar(&f.Command, "command", "", "what to run, through /bin/sh -c")
	af.StringVar(&f.Policy, "policy", "", "when a tick comes during a run: forbid (skip it; the default), replace or allow")
	af.IntVar(&f.Timeout, "timeout", 0, "seconds before a run is killed (default and most: the plan's)")

	var limit int
	runs := &cobra.Command{
		Use:     "runs NAME",
		Short:   "List a cron job's runs, newest first, skipped ticks included",
		Example: "  tori cron runs nightly --limit 10",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cronName(args[0]); err != nil {
				return err
			}
			if limit < 0 || limit > 200 {
				return usagef("--limit %d: want 1 to 200", limit)
			}
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.CronRun, api.Raw, error) {
				return s.client.ListCronRuns(ctx, slug, args[0], limit)
			}, s.printCronRuns)
		},
	}
	runs.Flags().IntVar(&limit, "limit", 0, "how many (1–200; default the API's 50)")

	c.AddCommand(add, &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the app's cron jobs with their next and last runs",
		Example: "  tori cron ls --app my-api",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.CronJob, api.Raw, error) {
				return s.client.ListCronJobs(ctx, slug)
			}, s.printCronJobs)
		},
	}, &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Remove a cron job (asks for its name again unless --yes)",
		Example: "  tori cron rm nightly --yes",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cronName(args[0]); err != nil {
				return err
			}
			return s.removeFromApp("cron job", (*api.Client).DeleteCronJob)(cmd, args)
		},
	}, &cobra.Command{
		Use:     "run NAME",
		Short:   "Start a run of a cron job now",
		Example: "  tori cron run nightly",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cronName(args[0]); err != nil {
				return err
			}
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.CronRun, api.Raw, error) {
				return s.client.RunCronJob(ctx, slug, args[0])
			}, func(r api.CronRun) error {
				s.ui.Printf("Started run %s of %s (%s). Its output: tori logs --process cron.%s.%s\n", r.ID, args[0], r.Status, args[0], r.ID)
				return nil
			})
		},
	}, runs)
	return c
}

func nextRun(j api.CronJob) string {
	if !j.Enabled || j.NextRunAt == nil {
		return "disabled"
	}
	return *j.NextRunAt
}

// runSummary is a run in a word or two: "succeeded", "failed (exit 2)", "skipped: overlap".
func runSummary(r *api.CronRun) string {
	switch {
	case r == nil:
		return "-"
	case r.SkipReason != nil:
		return r.Status + ": " + *r.SkipReason
	case r.ExitCode != nil && r.Status == "failed":
		return fmt.Sprintf("%s (exit %d)", r.Status, *r.ExitCode)
	}
	return r.Status
}

func (s *state) printCronJobs(jobs []api.CronJob) error {
	if len(jobs) == 0 {
		s.ui.Printf("No cron jobs. Add one with tori cron add NAME --schedule '0 3 * * *' --command '…'.\n")
		return nil
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, s.ui.Paint(ui.Bold, "NAME\tSCHEDULE\tTIMEZONE\tNEXT RUN\tLAST RUN\tCOMMAND"))
	for _, j := range jobs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, j.Schedule, j.Timezone, nextRun(j), runSummary(j.LastRun), j.Command)
	}
	return w.Flush()
}

func (s *state) printCronRuns(runs []api.CronRun) error {
	if len(runs) == 0 {
		s.ui.Printf("No runs yet.\n")
		return nil
	}
	opt := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, s.ui.Paint(ui.Bold, "ID\tTRIGGER\tSCHEDULED FOR\tSTATUS\tSTARTED\tFINISHED"))
	for i := range runs {
		r := &runs[i]
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Trigger, r.ScheduledFor, runSummary(r), opt(r.StartedAt), opt(r.FinishedAt))
	}
	return w.Flush()
}
