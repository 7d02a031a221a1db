package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/names"
)

// maxScaleChanges is the most entries one scale request may carry (the API's limit).
const maxScaleChanges = 50

func badProcessName(name string) error {
	return fmt.Errorf("%q is not a process type: lowercase letters, digits and -, starting with a letter, at most 30", name)
}

// ParseScale reads `scale` arguments, TYPE=QUANTITY each, in the order given. A type named
// twice is refused rather than guessed at: the API would refuse it too.
func ParseScale(args []string) ([]api.FormationChange, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("nothing to scale: give TYPE=QUANTITY, as in web=2 worker=1")
	}
	if len(args) > maxScaleChanges {
		return nil, fmt.Errorf("at most %d types at once", maxScaleChanges)
	}
	seen := map[string]bool{}
	out := make([]api.FormationChange, 0, len(args))
	for _, a := range args {
		typ, qty, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want TYPE=QUANTITY, as in web=2", a)
		}
		if !names.ProcessName(typ) {
			return nil, badProcessName(typ)
		}
		n, err := strconv.Atoi(qty)
		if err != nil || n < 0 || strings.HasPrefix(qty, "+") {
			return nil, fmt.Errorf("%q: the quantity must be a whole number, 0 or more", a)
		}
		if seen[typ] {
			return nil, fmt.Errorf("%s is given twice", typ)
		}
		seen[typ] = true
		out = append(out, api.FormationChange{Type: typ, Quantity: n})
	}
	return out, nil
}

// ParseProcesses reads `deploy --process NAME=COMMAND` values into an image deploy's
// processes; the command is everything after the first "=".
func ParseProcesses(values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range values {
		name, command, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("--process %q: want NAME=COMMAND, as in worker='./worker --queue default'", v)
		}
		if !names.ProcessName(name) {
			return nil, fmt.Errorf("--process: %w", badProcessName(name))
		}
		if strings.TrimSpace(command) == "" {
			return nil, fmt.Errorf("--process %s: the command is empty", name)
		}
		if _, twice := out[name]; twice {
			return nil, fmt.Errorf("--process %s is given twice", name)
		}
		out[name] = command
	}
	return out, nil
}

func (s *state) psCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "ps",
		Short: "List the app's process types: how many instances each should run, and how many do",
		Long: "The live deploy's process types (tori.json processes, a Procfile, or an image deploy's\n" +
			"--process), web first. RUNNING is what the zone last reported: it follows a scale within\n" +
			"seconds, and a worker that keeps exiting is restarted with backoff. A napping web counts 0.",
		Example: "  tori ps --app my-api\n  tori ps --json",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.FormationEntry, api.Raw, error) {
				return s.client.Formation(ctx, slug)
			}, s.printFormation)
		},
	}
	return s.appFlag(c, false)
}

func (s *state) scaleCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "scale TYPE=QUANTITY…",
		Short: "Set how many instances of each process type run",
		Long: "Sets each type's quantity in one request, which the API applies all together or not at all:\n" +
			"a refused entry (an unknown type, over the plan's limits) changes nothing. Scaling makes no\n" +
			"new deploy. Prints the formation after the change.",
		Example: "  tori scale web=2 worker=1\n  tori scale worker=0 --app my-api",
		Args:    cobra.MinimumNArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			changes, err := ParseScale(args)
			if err != nil {
				return usageError{err}
			}
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.FormationEntry, api.Raw, error) {
				return s.client.Scale(ctx, slug, changes)
			}, s.printFormation)
		},
	}
	return s.appFlag(c, false)
}

// printFormation is `tori ps`'s table; an app with nothing declared says why.
func (s *state) printFormation(f []api.FormationEntry) error {
	if len(f) == 0 {
		s.ui.Printf("No processes: a static site runs none, and a service has them once a deploy is live.\n")
		return nil
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, s.ui.Paint(ui.Bold, "TYPE\tQUANTITY\tRUNNING\tCOMMAND"))
	for _, e := range f {
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\n", e.Type, e.Quantity, e.Running, e.Command)
	}
	return w.Flush()
}
