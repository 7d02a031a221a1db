package commands

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/config"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/access"
	"tori.dev/contract/apitime"
	"tori.dev/contract/names"
)

func (s *state) loginCmd() *cobra.Command {
	var web bool
	var consoleURL string
	c := &cobra.Command{
		Use:   "login",
		Short: "Sign in (device code by default, --web for a browser on this machine)",
		Long: "Signs in and keeps an API token in $XDG_CONFIG_HOME/tori/config.json (mode 0600).\n\n" +
			"By default tori shows a code and a link: open the link anywhere you are signed in to the\n" +
			"console and confirm the code. --web instead opens the console on this machine, which sends\n" +
			"the browser back to tori on 127.0.0.1; where that cannot work, paste the address the\n" +
			"browser ended on.",
		Example: "  tori login\n  tori login --web\n  TORI_API_URL=https://api.tori.example tori login",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := s.connect(false); err != nil {
				return err
			}
			var tok api.CLIToken
			var err error
			if web {
				if consoleURL == "" {
					consoleURL = s.env.Getenv("TORI_CONSOLE_URL")
				}
				if consoleURL == "" {
					consoleURL = "http://127.0.0.1:5173"
				}
				tok, err = s.loopback(cmd.Context(), consoleURL)
			} else {
				name := "tori CLI"
				if h, herr := os.Hostname(); herr == nil {
					name += " on " + h
				}
				tok, _, err = s.device(cmd.Context(), name)
			}
			if err != nil {
				return err
			}
			file, _ := config.Load(s.settings.Path)
			file.Token, file.TokenID, file.APIURL = tok.Token, tok.TokenID, s.settings.APIURL
			if err := config.Save(s.settings.Path, file); err != nil {
				return fmt.Errorf("signed in, but the token could not be kept: %v", err)
			}
			s.client.Token = tok.Token
			acc, raw, err := s.client.Account(cmd.Context())
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			s.ui.Printf("Signed in as %s (%s plan).\n", s.ui.Paint(ui.Bold, acc.User.Email), acc.Plan)
			return nil
		},
	}
	c.Flags().BoolVar(&web, "web", false, "sign in with a browser on this machine (loopback, PKCE)")
	c.Flags().StringVar(&consoleURL, "console-url", "", "the console's address for --web (default $TORI_CONSOLE_URL or http://127.0.0.1:5173)")
	return c
}

// device runs the device flow: the person confirms the code in the console; tori polls.
func (s *state) device(ctx context.Context, clientName string) (api.CLIToken, api.Raw, error) {
	d, _, err := s.client.StartDevice(ctx, clientName)
	if err != nil {
		return api.CLIToken{}, nil, err
	}
	fmt.Fprintf(s.env.Stderr, "Open %s\nand confirm the code %s\n", d.VerificationURIComplete, s.ui.PaintErr(ui.Bold, d.UserCode))
	s.browse(d.VerificationURIComplete)
	fmt.Fprintln(s.env.Stderr, "Waiting for confirmation…")
	interval := time.Duration(d.Interval) * time.Second
	if interval < time.Second {
		interval = time.Second
	}
	expires := time.Now().Add(time.Duration(d.ExpiresIn) * time.Second)
	if d.ExpiresIn <= 0 {
		expires = time.Now().Add(10 * time.Minute)
	}
	for {
		if err := s.sleep(ctx, interval); err != nil {
			return api.CLIToken{}, nil, err
		}
		tok, raw, err := s.client.PollDevice(ctx, d.DeviceCode)
		if err == nil {
			return tok, raw, nil
		}
		var apiErr *api.Error
		if !errors.As(err, &apiErr) {
			return api.CLIToken{}, nil, err
		}
		switch apiErr.Word() {
		case "authorization_pending":
		case "slow_down":
			// RFC 8628: five seconds more from now on, or what the server asks if longer.
			interval += 5 * time.Second
			if ra := apiErr.RetryAfter(); ra > interval {
				interval = ra
			}
		case "expired_token":
			return api.CLIToken{}, nil, errors.New("the code expired before it was confirmed; run the command again")
		case "access_denied":
			return api.CLIToken{}, nil, errors.New("the sign-in was denied")
		default:
			return api.CLIToken{}, nil, err
		}
		if time.Now().After(expires) {
			return api.CLIToken{}, nil, errors.New("the code expired before it was confirmed; run the command again")
		}
	}
}

// PKCE is a verifier and its S256 challenge.
func PKCE() (verifier, challenge string) {
	b := make([]byte, 32)
	rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// loopback runs the browser flow: the console authorizes and sends the browser to our
// listener on 127.0.0.1 with a code, which we exchange with the verifier only we know.
func (s *state) loopback(ctx context.Context, consoleURL string) (api.CLIToken, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return api.CLIToken{}, err
	}
	defer ln.Close()
	verifier, challenge := PKCE()
	stateB := make([]byte, 16)
	rand.Read(stateB)
	wantState := base64.RawURLEncoding.EncodeToString(stateB)
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr().String())
	q := url.Values{"redirectUri": {redirect}, "state": {wantState}, "codeChallenge": {challenge}, "codeChallengeMethod": {"S256"}}
	authorize := strings.TrimRight(consoleURL, "/") + "/cli/authorize?" + q.Encode()

	codes := make(chan url.Values, 2)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		codes <- r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Tori</title><p>Signed in. You can close this tab and return to the terminal.</p>")
	}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	fmt.Fprintf(s.env.Stderr, "Open %s\n", authorize)
	s.browse(authorize)
	fmt.Fprintln(s.env.Stderr, "Waiting for the browser… (if it cannot reach this machine, paste the address it ended on here)")
	go func() {
		// The paste fallback: the address the browser was sent to, or only its code.
		for {
			line, err := s.ui.ReadLine()
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if u, err := url.Parse(line); err == nil && u.Query().Get("code") != "" {
				codes <- u.Query()
			} else {
				codes <- url.Values{"code": {line}, "state": {wantState}}
			}
			return
		}
	}()
	var got url.Values
	select {
	case got = <-codes:
	case <-ctx.Done():
		return api.CLIToken{}, ctx.Err()
	case <-time.After(10 * time.Minute):
		return api.CLIToken{}, errors.New("no answer from the browser within 10 minutes")
	}
	if got.Get("state") != wantState {
		return api.CLIToken{}, errors.New("the browser came back with another sign-in's state; nothing was kept")
	}
	if e := got.Get("error"); e != "" {
		return api.CLIToken{}, errors.New(e)
	}
	tok, _, err := s.client.LoopbackToken(ctx, api.LoopbackTokenRequest{Code: got.Get("code"), CodeVerifier: verifier, RedirectURI: redirect})
	return tok, err
}

func (s *state) logoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "logout",
		Short:   "Revoke this machine's token and forget it",
		Example: "  tori logout",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := s.connect(false); err != nil {
				return err
			}
			if s.settings.TokenFromEnv {
				return errors.New("TORI_TOKEN is set: revoke it with `tori tokens revoke ID` and unset it")
			}
			file, err := config.Load(s.settings.Path)
			if err != nil {
				return err
			}
			if file.Token == "" {
				s.ui.Println("Not signed in.")
				return nil
			}
			if file.TokenID != "" {
				err := s.client.RevokeToken(cmd.Context(), file.TokenID)
				var apiErr *api.Error
				// A token already revoked elsewhere answers 401 or 404: forget it all the same.
				if err != nil && !(errors.As(err, &apiErr) && (apiErr.Status == 401 || apiErr.Status == 404)) {
					return err
				}
			}
			file.Token, file.TokenID = "", ""
			if err := config.Save(s.settings.Path, file); err != nil {
				return err
			}
			if s.json {
				return s.printJSON(api.Raw(`{"ok":true}`))
			}
			s.ui.Println("Signed out; the token is revoked.")
			return nil
		},
	}
}

func (s *state) whoamiCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "whoami",
		Short:   "Show who is signed in",
		Example: "  tori whoami\n  tori whoami --json",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			acc, raw, err := s.client.Account(cmd.Context())
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			s.ui.Printf("%s (%s plan, region %s)\n", acc.User.Email, acc.Plan, acc.DefaultRegion)
			return nil
		},
	}
}

func (s *state) tokensCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "tokens",
		Short: "List, create and revoke API tokens",
		Long: "A full token (tokens create NAME alone) acts as you in every team, and is made through\n" +
			"the console's confirmation. A scoped token (--scope) acts in one team only, with at most\n" +
			"its scope (read < deploy < write < admin) and your current role there, optionally pinned\n" +
			"to some apps (--app), and expires (--expires, default 90 days, at most 365): the one to\n" +
			"give CI. Any signed-in tori can create one that its own token covers.",
		Example: "  tori tokens list\n  tori tokens create ci --scope deploy --app web --expires 90d --team acme\n" +
			"  tori tokens create laptop\n  tori tokens revoke 3f2a…\n  tori tokens list --all --team acme",
	}
	var all bool
	list := &cobra.Command{
		Use:     "list",
		Short:   "List your API tokens (--all: every member's tokens of the team, for its admins)",
		Example: "  tori tokens list\n  tori tokens list --all --team acme",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all {
				return aboutTeam(s, cmd, s.client.ListTeamTokens, s.printTeamTokens)
			}
			toks, raw, err := s.client.ListTokens(cmd.Context())
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, s.ui.Paint(ui.Bold, "ID\tNAME\tPREFIX\tTEAM\tSCOPES\tAPPS\tEXPIRES\tCREATED\tLAST USED"))
			for _, t := range toks {
				team, scopes, apps, expires := "all", "full", "all", "never"
				if t.Team != nil {
					team = *t.Team
				}
				if len(t.Scopes) > 0 {
					scopes = strings.Join(t.Scopes, ",")
				}
				if len(t.Apps) > 0 {
					apps = strings.Join(t.Apps, ",")
				}
				if t.ExpiresAt != nil {
					expires = *t.ExpiresAt
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.Prefix, team, scopes, apps, expires, t.CreatedAt, lastUsed(t.LastUsedAt))
			}
			return w.Flush()
		},
	}
	list.Flags().BoolVar(&all, "all", false, "every member's tokens of the team (--team; admins), never their secrets")

	var f TokenFlags
	create := &cobra.Command{
		Use:   "create NAME [--scope SCOPE --app SLUG --expires 30d]",
		Short: "Create an API token and print its secret once",
		Long: "With --scope: a scoped token for the team (--team, else your personal team), created at\n" +
			"once by this signed-in tori (a scoped TORI_TOKEN can make one its own scope, apps and\n" +
			"expiry cover). --scope may be repeated; the broadest counts. --app (repeatable) pins it\n" +
			"to those apps: others answer 404. --expires is a span (90d, 12h, 45m) or an RFC 3339 time.\n\n" +
			"Without --scope: a full token, which only a sign-in session may make, so this runs the\n" +
			"device sign-in with NAME as the token's name: confirm the code in the console.",
		Example: "  tori tokens create ci --scope deploy --app web --expires 90d --team acme\n" +
			"  tori tokens create reader --scope read --expires 2027-01-01T00:00:00Z\n  tori tokens create laptop",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := ParseTokenCreate(args[0], f, time.Now())
			if err != nil {
				return usageError{err}
			}
			if in == nil {
				return s.createFullToken(cmd, args[0])
			}
			if err := s.connect(true); err != nil {
				return err
			}
			if in.Team, err = s.teamSlug(cmd.Context()); err != nil {
				return err
			}
			tok, raw, err := s.client.CreateToken(cmd.Context(), *in)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			apps := "every app"
			if len(tok.Apps) > 0 {
				apps = strings.Join(tok.Apps, ", ")
			}
			fmt.Fprintf(s.env.Stderr, "Created token %s (id %s) for %s: %s on %s, until %s. Its secret is shown only now:\n",
				tok.Name, tok.ID, in.Team, strings.Join(tok.Scopes, ","), apps, deref(tok.ExpiresAt))
			s.ui.Println(tok.Token)
			return nil
		},
	}
	cf := create.Flags()
	cf.StringArrayVar(&f.Scopes, "scope", nil, "read, deploy, write or admin (repeatable; the broadest counts)")
	cf.StringArrayVar(&f.Apps, "app", nil, "pin the token to this app's slug (repeatable; default every app of the team)")
	cf.StringVar(&f.Expires, "expires", "", "30d, 12h, 45m or an RFC 3339 time (default 90d, at most 365d)")
	create.RegisterFlagCompletionFunc("app", s.completeApps)
	create.RegisterFlagCompletionFunc("scope", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"read", "deploy", "write", "admin"}, cobra.ShellCompDirectiveNoFileComp
	})

	revoke := &cobra.Command{
		Use:     "revoke ID",
		Short:   "Revoke an API token (--all: any member's token of the team, for its admins)",
		Example: "  tori tokens revoke 3f2a… --yes\n  tori tokens revoke 3f2a… --all --team acme",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := s.confirm("revoke token "+args[0], args[0]); err != nil {
				return err
			}
			if all {
				team, err := s.teamSlug(cmd.Context())
				if err != nil {
					return err
				}
				if err := s.client.RevokeTeamToken(cmd.Context(), team, args[0]); err != nil {
					return err
				}
			} else if err := s.client.RevokeToken(cmd.Context(), args[0]); err != nil {
				return err
			}
			return s.done("Revoked token %s.\n", args[0])
		},
	}
	revoke.Flags().BoolVar(&all, "all", false, "a token of any member of the team (--team; admins)")
	c.AddCommand(list, create, revoke)
	return c
}

// createFullToken runs the device sign-in with the token's name: a full token is a
// session's to make, and the console's confirmation is that session.
func (s *state) createFullToken(cmd *cobra.Command, name string) error {
	if err := s.connect(false); err != nil {
		return err
	}
	tok, raw, err := s.device(cmd.Context(), name)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(raw)
	}
	fmt.Fprintf(s.env.Stderr, "Created token %s (id %s). Its secret is shown only now:\n", name, tok.TokenID)
	s.ui.Println(tok.Token)
	return nil
}

func lastUsed(p *string) string {
	if p == nil {
		return "never"
	}
	return *p
}

func (s *state) printTeamTokens(team string, toks []api.TeamToken) error {
	if len(toks) == 0 {
		s.ui.Printf("No tokens act in %s.\n", team)
		return nil
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, s.ui.Paint(ui.Bold, "ID\tNAME\tPREFIX\tOWNER\tSCOPES\tAPPS\tEXPIRES\tLAST USED"))
	for _, t := range toks {
		scopes, apps := "full", "all"
		if len(t.Scopes) > 0 {
			scopes = strings.Join(t.Scopes, ",")
		}
		if len(t.Apps) > 0 {
			apps = strings.Join(t.Apps, ",")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.Prefix, dash(t.Email), scopes, apps, deref(t.ExpiresAt), lastUsed(t.LastUsedAt))
	}
	return w.Flush()
}

// TokenFlags are `tori tokens create`'s flags, as typed.
type TokenFlags struct {
	Scopes, Apps []string
	Expires      string
}

// ParseTokenCreate checks `tokens create NAME` and its flags before anything is sent. It
// returns nil for a full token (no --scope, no --app, no --expires); a scoped token's body
// otherwise, without its team, which the caller fills in.
func ParseTokenCreate(name string, f TokenFlags, now time.Time) (*api.TokenCreate, error) {
	if strings.TrimSpace(name) == "" || len(name) > 100 {
		return nil, fmt.Errorf("the token needs a name of 1 to 100 characters")
	}
	var scopes []string
	for _, sc := range f.Scopes {
		for _, one := range strings.Split(sc, ",") {
			one = strings.TrimSpace(one)
			if _, ok := access.ParseScope(one); !ok {
				return nil, fmt.Errorf("--scope %q: want read, deploy, write or admin", one)
			}
			if !slices.Contains(scopes, one) {
				scopes = append(scopes, one)
			}
		}
	}
	var apps []string
	for _, a := range f.Apps {
		for _, one := range strings.Split(a, ",") {
			one = strings.TrimSpace(one)
			if !names.ValidSlug(one) {
				return nil, fmt.Errorf("--app %q is not an app's slug", one)
			}
			if !slices.Contains(apps, one) {
				apps = append(apps, one)
			}
		}
	}
	if len(scopes) == 0 {
		if len(apps) > 0 || f.Expires != "" {
			return nil, fmt.Errorf("--app and --expires make a scoped token: add --scope (read, deploy, write or admin)")
		}
		return nil, nil
	}
	in := &api.TokenCreate{Name: name, Scopes: scopes, Apps: apps}
	if e := strings.TrimSpace(f.Expires); e != "" {
		if t, err := time.Parse(time.RFC3339, e); err == nil {
			if !t.After(now) {
				return nil, fmt.Errorf("--expires %s is already past", e)
			}
			in.ExpiresAt = apitime.Format(t)
		} else if d, err := ParseSpan(e); err == nil {
			if d < time.Minute {
				return nil, fmt.Errorf("--expires %s: at least a minute", e)
			}
			in.ExpiresIn = int64(d / time.Second)
		} else {
			return nil, errExpires
		}
	}
	return in, nil
}
