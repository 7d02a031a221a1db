package commands

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds the API calls behind a Tab: a shell waiting longer feels broken.
const completionTimeout = 5 * time.Second

// completeTeams offers the slugs of the caller's teams (for --team), as completeApps does.
func (s *state) completeTeams(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if err := s.connect(true); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(completionContext(cmd), completionTimeout)
	defer cancel()
	teams, _, err := s.client.ListTeams(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, t := range teams {
		if strings.HasPrefix(t.Slug, prefix) {
			out = append(out, t.Slug+"\t"+t.Role)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeApps offers the signed-in account's app slugs (for -a/--app and SLUG arguments).
// Not signed in, or no answer: nothing, quietly, as a shell expects.
func (s *state) completeApps(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if err := s.connect(true); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(completionContext(cmd), completionTimeout)
	defer cancel()
	apps, _, err := s.client.ListApps(ctx, s.team())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, a := range apps {
		if strings.HasPrefix(a.Slug, prefix) {
			out = append(out, a.Slug+"\t"+a.Kind)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeAppArg completes the one SLUG argument of `apps show|delete`.
func (s *state) completeAppArg(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return s.completeApps(cmd, args, prefix)
}

// envKeys lists the names of the app's variables that start with prefix and are not among
// args already typed, each followed by suffix.
func (s *state) envKeys(cmd *cobra.Command, args []string, prefix, suffix string) []string {
	if err := s.connect(true); err != nil {
		return nil
	}
	slug, err := s.slug()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(completionContext(cmd), completionTimeout)
	defer cancel()
	vars, _, err := s.client.ListEnv(ctx, slug)
	if err != nil {
		return nil
	}
	typed := map[string]bool{}
	for _, a := range args {
		k, _, _ := strings.Cut(a, "=")
		typed[k] = true
	}
	var out []string
	for _, v := range vars {
		if strings.HasPrefix(v.Key, prefix) && !typed[v.Key] {
			out = append(out, v.Key+suffix)
		}
	}
	return out
}

// completeEnvUnset offers the variables the app has.
func (s *state) completeEnvUnset(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	return s.envKeys(cmd, args, prefix, ""), cobra.ShellCompDirectiveNoFileComp
}

// completeEnvSet offers the app's variable names followed by "=", for a new value; once a
// "=" is typed there is nothing to offer.
func (s *state) completeEnvSet(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if strings.Contains(prefix, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return s.envKeys(cmd, args, prefix, "="), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func completionContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
