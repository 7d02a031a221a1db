package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/names"
)

// ParseAssignments reads `set` arguments: KEY=VALUE pairs, or one KEY followed by "-",
// whose value is standard input (one trailing newline dropped).
func ParseAssignments(args []string, stdin io.Reader) ([][2]string, error) {
	if len(args) == 2 && args[1] == "-" && !strings.Contains(args[0], "=") {
		if !names.ValidEnvKey(args[0]) {
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
		if !names.ValidEnvKey(k) {
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
		if !ok || !names.ValidEnvKey(k) {
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
	s.appFlag(c, true)
	// change sends every assignment and removal in one request, which the API applies all
	// together or not at all: a refusal of one key leaves every variable as it was.
	change := func(ctx context.Context, slug string, in api.EnvChange, done string) error {
		_, raw, err := s.client.ChangeEnv(ctx, slug, in)
		if err != nil {
			return err
		}
		if s.json {
			return s.printJSON(raw)
		}
		s.ui.Printf("%s\n", done)
		fmt.Fprintln(s.env.Stderr, "A service picks up changes with its next deploy.")
		return nil
	}
	set := func(ctx context.Context, slug string, pairs [][2]string) error {
		in := api.EnvChange{Set: map[string]string{}}
		var keys []string
		for _, kv := range pairs {
			if _, twice := in.Set[kv[0]]; !twice {
				keys = append(keys, kv[0])
			}
			in.Set[kv[0]] = kv[1] // the last of a repeated key wins, as in a shell
		}
		return change(ctx, slug, in, fmt.Sprintf("Set %s on %s.", strings.Join(keys, ", "), slug))
	}
	c.AddCommand(&cobra.Command{
		Use:     "list",
		Short:   "List variables, values masked",
		Example: "  tori env list --app my-api",
		Aliases: []string{"ls"},
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
		Use:               "set KEY=VALUE… | set KEY -",
		Short:             "Set variables; `KEY -` reads the value from standard input",
		Example:           "  tori env set API_KEY=s3cret DEBUG=0\n  printf %s \"$SECRET\" | tori env set API_KEY -",
		Args:              cobra.MinimumNArgs(1),
		PreRunE:           s.signedIn,
		ValidArgsFunction: s.completeEnvSet,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			pairs, err := ParseAssignments(args, s.env.Stdin)
			if err != nil {
				return usageError{err}
			}
			return set(cmd.Context(), slug, pairs)
		},
	}, &cobra.Command{
		Use:               "unset KEY…",
		Short:             "Remove variables (a name the app does not have is not an error)",
		Example:           "  tori env unset DEBUG OLD_KEY",
		Args:              cobra.MinimumNArgs(1),
		PreRunE:           s.signedIn,
		ValidArgsFunction: s.completeEnvUnset,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			for _, k := range args {
				if !names.ValidEnvKey(k) {
					return usagef("%q is not a variable name (A-Z, 0-9, _; starting with a letter)", k)
				}
			}
			return change(cmd.Context(), slug, api.EnvChange{Unset: args}, fmt.Sprintf("Unset %s on %s.", strings.Join(args, ", "), slug))
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
