package commands

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
)

// Exit codes, as shells and CI read them.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the command ran and failed (the API said no, a deploy failed, no answer)
	ExitUsage       = 2   // the command line itself is wrong: nothing was sent
	ExitInterrupted = 130 // Ctrl-C (128 + SIGINT), as a shell reports a program it interrupted
)

// usageError is a mistake in the command line: an unknown command or flag, a missing or
// extra argument, an argument that does not parse. It exits ExitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// usageArgs makes every argument check of the tree a usage error, and gives each command
// group (apps, env, …) a check of its own, so `tori env bogus` says so instead of printing
// help and exiting 0.
func usageArgs(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return usageError{errors.New(msg)}
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	} else if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// explain is the message an error prints: an API error names the app (or other object) and
// the request, and says what to do next.
func explain(err error) string {
	var ae *api.Error
	if !errors.As(err, &ae) {
		return err.Error()
	}
	req := "(" + ae.Method + " " + ae.URL + ")"
	path, params := "", ae.Params
	if ae.Op != nil {
		path = ae.Op.Path
	}
	slug := ""
	if strings.HasPrefix(path, "/api/apps/{slug}") && len(params) > 0 {
		slug = params[0]
	}
	switch {
	case ae.Status == 401 && ae.Word() == "token_expired":
		return ae.Words() + " " + req + `: the token has expired; sign in again with "tori login", or give CI a new one ("tori tokens create NAME --scope …")`
	case ae.Status == 401:
		return ae.Words() + " " + req + `: sign in again with "tori login" (or check TORI_TOKEN)`
	case ae.Status == 404 && slug != "":
		what, hint := missing(path, params)
		return what + " not found " + req + ": " + hint
	case ae.Status == 404 && strings.HasPrefix(path, "/api/tokens/") && len(params) > 0:
		return fmt.Sprintf(`token %q not found %s: "tori tokens list" lists them`, params[0], req)
	case ae.Status == 404 && strings.HasPrefix(path, "/api/teams/{team}") && len(params) > 0:
		return fmt.Sprintf(`%s not found %s: "tori teams" lists your teams`, missingInTeam(path, params), req)
	case ae.Status == 404 && ae.Op != nil && slices.Contains(ae.Op.Query, "team"):
		return ae.Words() + " " + req + `: no team of yours has that slug; "tori teams" lists them`
	}
	msg := ae.Words() + " " + req
	if slug != "" {
		msg = fmt.Sprintf("app %q: %s", slug, msg)
	}
	switch {
	case ae.Status == 402:
		msg += `: pay the open invoice; "tori billing" shows the hold and its dates`
	case ae.Word() == "insufficient_role":
		msg += fmt.Sprintf(": this needs the %s role in the team; an admin can change yours (\"tori members set-role\")", dash(ae.Body.RequiredRole))
	case ae.Word() == "insufficient_scope":
		msg += fmt.Sprintf(": this token's scope does not cover it (it needs %s); create one with --scope %s, or use a full token", dash(ae.Body.RequiredScope), dash(ae.Body.RequiredScope))
	case ae.Word() == "session_required" && path == "/api/invitations/accept":
		msg += ": accepting takes a sign-in session; open the invitation's link in the console"
	case ae.Word() == "session_required":
		msg += `: only a sign-in session may do this; use the console, or "tori tokens create NAME --scope …" for a scoped token`
	case ae.Status == 403 && overPlan(ae.Word()):
		msg += `: "tori plans" shows each plan's limits`
	case ae.Word() == "unknown_process_type":
		msg += fmt.Sprintf(`: "tori ps -a %s" lists the types its live deploy declares`, slug)
	case ae.Status == 429:
		msg += ": wait a little and try again"
	case ae.Status >= 500:
		msg += ": the API could not answer now; try again shortly"
	}
	return msg
}

// missingInTeam names what a 404 under /api/teams/{team} did not find.
func missingInTeam(path string, params []string) string {
	team := params[0]
	switch {
	case len(params) > 1 && strings.HasPrefix(path, "/api/teams/{team}/members/"):
		return fmt.Sprintf("member %q of team %q", params[1], team)
	case len(params) > 1 && strings.HasPrefix(path, "/api/teams/{team}/invitations/"):
		return fmt.Sprintf("invitation %q of team %q", params[1], team)
	case len(params) > 1 && strings.HasPrefix(path, "/api/teams/{team}/tokens/"):
		return fmt.Sprintf("token %q of team %q", params[1], team)
	}
	return fmt.Sprintf("team %q", team)
}

// missing names what a 404 under /api/apps/{slug} did not find, and where to look.
func missing(path string, params []string) (string, string) {
	slug := params[0]
	param := func(i int) string {
		if i < len(params) {
			return params[i]
		}
		return ""
	}
	check := `check the name with "tori apps list"`
	switch {
	case strings.HasPrefix(path, "/api/apps/{slug}/deploys/{id}"):
		return fmt.Sprintf("deploy %q of app %q", param(1), slug), fmt.Sprintf(`"tori deploys list -a %s" lists its deploys; %s`, slug, check)
	case strings.HasPrefix(path, "/api/apps/{slug}/env/{key}"):
		return fmt.Sprintf("variable %s of app %q", param(1), slug), fmt.Sprintf(`"tori env list -a %s" lists its variables`, slug)
	case strings.HasPrefix(path, "/api/apps/{slug}/domains/{hostname}"):
		return fmt.Sprintf("hostname %q of app %q", param(1), slug), fmt.Sprintf(`"tori domains list -a %s" lists its hostnames`, slug)
	case strings.HasPrefix(path, "/api/apps/{slug}/crons/{name}"):
		return fmt.Sprintf("cron job %q of app %q", param(1), slug), fmt.Sprintf(`"tori cron ls -a %s" lists its cron jobs`, slug)
	case strings.HasPrefix(path, "/api/apps/{slug}/previews/{id}"):
		return fmt.Sprintf("preview %q of app %q", param(1), slug), fmt.Sprintf(`"tori previews -a %s" lists its previews`, slug)
	case strings.HasPrefix(path, "/api/apps/{slug}/drains/{id}"):
		return fmt.Sprintf("drain %q of app %q", param(1), slug), fmt.Sprintf(`"tori drains -a %s" lists its drains`, slug)
	case strings.HasPrefix(path, "/api/apps/{slug}/database"):
		return fmt.Sprintf("database of app %q", slug), fmt.Sprintf(`create one with "tori db create -a %s", or %s`, slug, check)
	}
	return fmt.Sprintf("app %q", slug), check
}

// overPlan reports whether a 403's code is one of the plan's limits: app_limit_reached and
// the like, the formation's instances_per_process_limit, instances_total_limit and
// process_types_limit, and cron_interval_too_short.
func overPlan(code string) bool {
	return strings.HasSuffix(code, "_limit_reached") || strings.HasSuffix(code, "_limit") || code == "cron_interval_too_short"
}
