// Package commands is the tori command tree.
package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/bundle"
	"tori.dev/cli/internal/config"
	"tori.dev/cli/internal/ui"
)

// Version is set at build time with -ldflags "-X tori.dev/cli/internal/commands.Version=…".
var Version = "dev"

// Env is what a run needs from outside: streams, environment, clock and browser.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// OpenBrowser opens url and reports whether it could; nil: never.
	OpenBrowser func(url string) bool
	// Poll is the pause between polls of a deploy and its logs.
	Poll time.Duration
	// Timeout is how long a request may see no answer (api.DefaultTimeout when zero).
	Timeout time.Duration
}

// state is one run's flags and, once a command needs them, settings and client.
type state struct {
	env      Env
	ui       *ui.UI
	json     bool
	yes      bool
	app      string
	teamFlag string
	settings config.Settings
	client   *api.Client
}

// Main runs tori with args and returns the exit code.
func Main(ctx context.Context, env Env, args []string) int {
	s := &state{env: env, ui: ui.New(env.Stdin, env.Stdout, env.Stderr, env.Getenv)}
	root := s.root()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if ctx.Err() != nil {
		// Ctrl-C: whatever was under way stopped because the person asked.
		fmt.Fprintln(env.Stderr, "Interrupted.")
		return ExitInterrupted
	}
	if err == nil {
		return ExitOK
	}
	var apiErr *api.Error
	if s.json && errors.As(err, &apiErr) && json.Valid(apiErr.Raw) {
		fmt.Fprintln(env.Stdout, string(apiErr.Raw))
	}
	if !errors.Is(err, errQuiet) {
		fmt.Fprintf(env.Stderr, "%s %s\n", s.ui.PaintErr(ui.Red, "Error:"), explain(err))
	}
	var usage usageError
	if errors.As(err, &usage) {
		if cmd != nil {
			fmt.Fprintf(env.Stderr, "Run \"%s --help\" for usage.\n", cmd.CommandPath())
		}
		return ExitUsage
	}
	return ExitFailure
}

// errQuiet is a failure already told (a failed deploy's output said why).
var errQuiet = errors.New("")

func (s *state) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "tori",
		Short: "Deploy and run apps on Tori",
		Long: "tori is the command line of Tori: sign in, create apps, deploy folders, source or images,\n" +
			"follow logs, scale processes, run cron jobs, deploy previews, send logs to drains, read metrics,\n" +
			"and manage environment variables, hostnames and tokens.\n\n" +
			"TORI_API_URL and TORI_TOKEN override the signed-in settings in $XDG_CONFIG_HOME/tori/config.json.\n" +
			"The app a command works on is -a SLUG, else $TORI_APP, else the app field of ./tori.json.\n" +
			"The team is --team SLUG, else $TORI_TEAM, else every team (lists) or your personal team.\n\n" +
			"Exit codes: 0 success, 1 failure, 2 usage (a wrong command line), 130 interrupted.",
		Example:       "  tori login\n  tori apps create my-site\n  tori deploy ./public --app my-site",
		Version:       Version + " (commit " + Commit + ")",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.HiddenDefaultCmd = false
	pf := root.PersistentFlags()
	pf.BoolVar(&s.json, "json", false, "print the API's JSON")
	pf.BoolVarP(&s.yes, "yes", "y", false, "skip confirmations")
	pf.StringVar(&s.teamFlag, "team", "", "the team's slug (default: $TORI_TEAM, else every team for lists and your personal team otherwise)")
	root.RegisterFlagCompletionFunc("team", s.completeTeams)
	root.AddCommand(
		s.loginCmd(), s.logoutCmd(), s.whoamiCmd(),
		s.appsCmd(), s.deployCmd(), s.deploysCmd(), s.logsCmd(), s.envCmd(), s.domainsCmd(), s.dbCmd(),
		s.psCmd(), s.scaleCmd(), s.cronCmd(), s.previewsCmd(), s.drainsCmd(), s.metricsCmd(),
		s.tokensCmd(), s.billingCmd(), s.plansCmd(), s.initCmd(), s.openCmd(), s.statusCmd(),
		s.teamsCmd(), s.membersCmd(), s.invitationsCmd(), s.auditCmd(),
	)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// Made now rather than at Execute so they carry examples like every other command.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  tori help deploy"
		case "completion":
			c.Example = "  tori completion bash > /etc/bash_completion.d/tori\n  tori completion zsh > \"${fpath[1]}/_tori\"\n  tori completion fish > ~/.config/fish/completions/tori.fish"
			for _, sh := range c.Commands() {
				sh.Example = "  tori completion " + sh.Name() + " --help"
			}
		}
	}
	usageArgs(root)
	return root
}

// connect reads the settings and makes the client; needSignIn refuses without a token.
func (s *state) connect(needSignIn bool) error {
	if s.client != nil {
		return nil
	}
	st, err := config.Resolve(s.env.Getenv)
	if err != nil {
		return err
	}
	if needSignIn && st.Token == "" {
		return errors.New("not signed in: run `tori login` (or set TORI_TOKEN)")
	}
	s.settings = st
	s.client = &api.Client{
		BaseURL:   st.APIURL,
		Token:     st.Token,
		HTTP:      api.NewHTTPClient(s.env.Timeout),
		Timeout:   s.env.Timeout,
		UserAgent: "tori-cli/" + Version + " (" + runtime.GOOS + "/" + runtime.GOARCH + ")",
		Notice:    s.env.Stderr,
	}
	return nil
}

// signedIn is the PreRunE of every command that needs a token.
func (s *state) signedIn(*cobra.Command, []string) error { return s.connect(true) }

// appFlag gives c the -a/--app flag, with app names completed from the API. On a group
// (env, db, …) it is persistent, so it works before or after the subcommand; commands that
// do not work on one app do not have it.
func (s *state) appFlag(c *cobra.Command, persistent bool) *cobra.Command {
	fs := c.Flags()
	if persistent {
		fs = c.PersistentFlags()
	}
	fs.StringVarP(&s.app, "app", "a", "", "the app's slug (default: $TORI_APP, else the app field of ./tori.json)")
	c.RegisterFlagCompletionFunc("app", s.completeApps)
	return c
}

// slug is -a/--app, else $TORI_APP, else the app field of tori.json in dir, else of
// ./tori.json: what is typed wins over what the shell carries, which wins over the folder.
func (s *state) slug(dirs ...string) (string, error) {
	if s.app != "" {
		return s.app, nil
	}
	if app := strings.TrimSpace(s.env.Getenv("TORI_APP")); app != "" {
		return app, nil
	}
	for _, dir := range append(dirs, ".") {
		m, err := readManifest(dir)
		if err != nil {
			return "", err
		}
		if app, _ := m["app"].(string); app != "" {
			return app, nil
		}
	}
	return "", usagef("which app? pass --app SLUG (-a), set TORI_APP, or run `tori init` to link this folder")
}

// team is --team, else $TORI_TEAM; "" leaves the choice to the API (every team for a list,
// the personal team for a new app or billing).
func (s *state) team() string {
	if s.teamFlag != "" {
		return s.teamFlag
	}
	return strings.TrimSpace(s.env.Getenv("TORI_TEAM"))
}

// teamSlug is the team a team command works on: team(), else the caller's default team
// (their personal team, or a scoped token's one team), asked of the API since a path
// needs its slug.
func (s *state) teamSlug(ctx context.Context) (string, error) {
	if t := s.team(); t != "" {
		return t, nil
	}
	teams, _, err := s.client.ListTeams(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range teams {
		if t.Personal {
			return t.Slug, nil
		}
	}
	if len(teams) == 1 {
		return teams[0].Slug, nil
	}
	return "", usagef("which team? pass --team SLUG or set TORI_TEAM (\"tori teams\" lists yours)")
}

func readManifest(dir string) (map[string]any, error) {
	m := map[string]any{}
	b, err := os.ReadFile(filepath.Join(dir, bundle.Manifest))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, bundle.Manifest), err)
	}
	return m, nil
}

// printJSON prints the API's answer as it came, indented.
func (s *state) printJSON(raw api.Raw) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		_, err = s.env.Stdout.Write(append(raw, '\n'))
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.env.Stdout, string(b))
	return err
}

// removeFromApp is the RunE of a command removing one of the app's things named by its
// argument (a hostname, a cron job, a drain, a preview): asked for again unless --yes, then
// removed. what names the kind in the prompt and the answer; "" for a hostname, which names
// itself. remove is a method of the client, which exists only once the command runs.
func (s *state) removeFromApp(what string, remove func(c *api.Client, ctx context.Context, slug, name string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		slug, err := s.slug()
		if err != nil {
			return err
		}
		label := strings.TrimSpace(what + " " + args[0])
		if err := s.confirm("remove "+label+" from "+slug, args[0]); err != nil {
			return err
		}
		if err := remove(s.client, cmd.Context(), slug, args[0]); err != nil {
			return err
		}
		return s.done("Removed %s.\n", label)
	}
}

// confirm asks the person to type want (a slug, a hostname) unless --yes; with nobody at
// the terminal it refuses rather than guess.
func (s *state) confirm(action, want string) error {
	if s.yes {
		return nil
	}
	if !s.ui.InTerminal {
		return fmt.Errorf("refusing to %s without confirmation: pass --yes", action)
	}
	fmt.Fprintf(s.env.Stderr, "This will %s. Type %s to confirm: ", action, s.ui.PaintErr(ui.Bold, want))
	line, err := s.ui.ReadLine()
	if err != nil {
		return fmt.Errorf("no confirmation: %v", err)
	}
	if strings.TrimSpace(line) != want {
		return errors.New("confirmation did not match; nothing changed")
	}
	return nil
}

// browse opens url when a browser is there, and always says where to go.
func (s *state) browse(url string) {
	if s.env.OpenBrowser != nil && s.env.OpenBrowser(url) {
		return
	}
}

// SystemBrowser opens url in the desktop's browser when there is a desktop and a person.
func SystemBrowser(getenv func(string) string) func(string) bool {
	return func(url string) bool {
		if getenv("TORI_NO_BROWSER") != "" || !ui.IsTerminal(os.Stdin) {
			return false
		}
		var cmd *exec.Cmd
		switch runtime.GOOS {
		case "darwin":
			cmd = exec.Command("open", url)
		case "windows":
			cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
		default:
			if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
				return false
			}
			if b := getenv("BROWSER"); b != "" {
				cmd = exec.Command(b, url)
			} else {
				cmd = exec.Command("xdg-open", url)
			}
		}
		if cmd.Start() != nil {
			return false
		}
		go cmd.Wait()
		return true
	}
}

func (s *state) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *state) pollEvery() time.Duration {
	if s.env.Poll > 0 {
		return s.env.Poll
	}
	return time.Second
}

// aboutApp is the shape of every command that asks one thing about the current app: find the
// app's slug, make the call, then print the API's answer as it came with --json, or what
// human makes of it.
func aboutApp[T any](s *state, cmd *cobra.Command, call func(ctx context.Context, slug string) (T, api.Raw, error), human func(T) error) error {
	slug, err := s.slug()
	if err != nil {
		return err
	}
	v, raw, err := call(cmd.Context(), slug)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(raw)
	}
	return human(v)
}
