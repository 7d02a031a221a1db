package commands

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/access"
	"tori.dev/contract/names"
)

// dash is s, or "-" when there is nothing to show.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// deref is *p, or "-" for nil or empty.
func deref(p *string) string {
	if p == nil {
		return "-"
	}
	return dash(*p)
}

// inTeam is " (team acme)" for a message, or nothing when the API did not say.
func inTeam(slug string) string {
	if slug == "" {
		return ""
	}
	return " (team " + slug + ")"
}

// roleArg checks a role's name before anything is sent.
func roleArg(role string) error {
	if _, ok := access.ParseRole(role); !ok {
		return usagef("%q is not a role: want viewer, developer, admin or owner", role)
	}
	return nil
}

// aboutTeam is aboutApp for the team a command works on (--team, $TORI_TEAM, else the
// caller's personal team).
func aboutTeam[T any](s *state, cmd *cobra.Command, call func(ctx context.Context, team string) (T, api.Raw, error), human func(string, T) error) error {
	team, err := s.teamSlug(cmd.Context())
	if err != nil {
		return err
	}
	v, raw, err := call(cmd.Context(), team)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(raw)
	}
	return human(team, v)
}

// done prints {"ok":true} for --json, else the sentence.
func (s *state) done(format string, args ...any) error {
	if s.json {
		return s.printJSON(api.Raw(`{"ok":true}`))
	}
	s.ui.Printf(format, args...)
	return nil
}

func (s *state) teamsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "teams",
		Aliases: []string{"team"},
		Short:   "List, create, show, rename and delete teams (`tori teams` alone lists them)",
		Long: "A team owns apps, a plan and its billing; its members hold roles (viewer, developer,\n" +
			"admin, owner). Everyone has a personal team, which cannot be shared or deleted. The\n" +
			"team other commands work on is --team SLUG, else $TORI_TEAM, else your personal team.",
		Example: "  tori teams\n  tori teams create \"Acme Inc\"\n  tori teams show --team acme\n  tori teams rename \"Acme\" --team acme",
		Args:    cobra.NoArgs,
	}
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List your teams and your role in each",
		Example: "  tori teams list\n  tori teams list --json",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			teams, raw, err := s.client.ListTeams(cmd.Context())
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, s.ui.Paint(ui.Bold, "SLUG\tNAME\tROLE\tPLAN\tPERSONAL"))
			for _, t := range teams {
				personal := "no"
				if t.Personal {
					personal = "yes"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.Slug, t.Name, t.Role, t.Plan, personal)
			}
			return w.Flush()
		},
	}
	c.PreRunE, c.RunE = list.PreRunE, list.RunE

	var slug string
	create := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create a team (you become its owner; it starts on nestling)",
		Example: "  tori teams create \"Acme Inc\"\n  tori teams create \"Acme Inc\" --slug acme",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(args[0]) == "" {
				return usagef("the team needs a name")
			}
			if slug != "" && !names.ValidSlug(slug) {
				return usagef("--slug %q: lowercase letters, digits and dashes, as an app's", slug)
			}
			t, raw, err := s.client.CreateTeam(cmd.Context(), api.TeamCreate{Name: args[0], Slug: slug})
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			s.ui.Printf("Created team %s (%s plan). Invite people with tori members invite EMAIL --role developer --team %s\n",
				s.ui.Paint(ui.Bold, t.Slug), t.Plan, t.Slug)
			return nil
		},
	}
	create.Flags().StringVar(&slug, "slug", "", "the team's slug (default: made from the name); it never changes")

	show := &cobra.Command{
		Use:     "show [SLUG]",
		Short:   "Show a team (default: --team, else your personal team)",
		Example: "  tori teams show acme\n  tori teams show --team acme --json",
		Args:    cobra.MaximumNArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				s.teamFlag = args[0]
			}
			return aboutTeam(s, cmd, s.client.GetTeam, func(_ string, t api.Team) error {
				w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
				personal := "no"
				if t.Personal {
					personal = "yes"
				}
				for _, kv := range [][2]string{{"Slug", t.Slug}, {"Name", t.Name}, {"Your role", t.Role}, {"Plan", t.Plan},
					{"Personal", personal}, {"Created", t.CreatedAt}} {
					fmt.Fprintf(w, "%s\t%s\n", s.ui.Paint(ui.Bold, kv[0]+":"), kv[1])
				}
				return w.Flush()
			})
		},
	}

	rename := &cobra.Command{
		Use:     "rename [SLUG] NAME",
		Short:   "Rename a team (its slug stays)",
		Example: "  tori teams rename \"Acme GmbH\" --team acme\n  tori teams rename acme \"Acme GmbH\"",
		Args:    cobra.RangeArgs(1, 2),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[len(args)-1]
			if len(args) == 2 {
				s.teamFlag = args[0]
			}
			if strings.TrimSpace(name) == "" {
				return usagef("the team needs a name")
			}
			return aboutTeam(s, cmd, func(ctx context.Context, team string) (api.Team, api.Raw, error) {
				return s.client.RenameTeam(ctx, team, name)
			}, func(_ string, t api.Team) error {
				s.ui.Printf("Renamed team %s to %s.\n", t.Slug, t.Name)
				return nil
			})
		},
	}

	del := &cobra.Command{
		Use:     "delete [SLUG]",
		Short:   "Delete a team that owns no apps (asks for its slug unless --yes)",
		Example: "  tori teams delete acme\n  tori teams delete --team acme --yes",
		Args:    cobra.MaximumNArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			team := s.team()
			if len(args) == 1 {
				team = args[0]
			}
			if team == "" {
				// Never guess which team to delete.
				return usagef("which team? name it: tori teams delete SLUG")
			}
			if err := s.confirm("delete the team "+team, team); err != nil {
				return err
			}
			if err := s.client.DeleteTeam(cmd.Context(), team); err != nil {
				return err
			}
			return s.done("Deleted team %s.\n", team)
		},
	}
	c.AddCommand(list, create, show, rename, del)
	return c
}

func (s *state) membersCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "members",
		Aliases: []string{"member"},
		Short:   "List a team's members, invite people, change roles and remove members",
		Long: "Roles, each with what the ones before it may do: viewer (reads; environment values\n" +
			"masked), developer (deploy, roll back, environment, scale, cron), admin (apps, domains,\n" +
			"databases, members below owner, team tokens, the audit log), owner (billing, owners,\n" +
			"deleting the team). A member's USERID may also be given as their email.",
		Example: "  tori members --team acme\n  tori members invite ada@example.com --role developer --team acme\n" +
			"  tori members set-role ada@example.com admin --team acme\n  tori members remove ada@example.com --team acme",
		Args: cobra.NoArgs,
	}
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the team's members",
		Example: "  tori members list --team acme",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutTeam(s, cmd, s.client.ListMembers, func(_ string, ms []api.Member) error {
				w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, s.ui.Paint(ui.Bold, "USER ID\tEMAIL\tNAME\tROLE\tJOINED"))
				for _, m := range ms {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", m.UserID, m.Email, dash(m.Name), m.Role, m.JoinedAt)
				}
				return w.Flush()
			})
		},
	}
	c.PreRunE, c.RunE = list.PreRunE, list.RunE

	var role string
	invite := &cobra.Command{
		Use:     "invite EMAIL --role ROLE",
		Short:   "Invite someone by email (the link they get is good for 7 days, once)",
		Example: "  tori members invite ada@example.com --role developer --team acme",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !strings.Contains(args[0], "@") {
				return usagef("%q is not an email address", args[0])
			}
			if role == "" {
				return usagef("--role is required: viewer, developer, admin or owner")
			}
			if err := roleArg(role); err != nil {
				return err
			}
			return aboutTeam(s, cmd, func(ctx context.Context, team string) (api.CreatedInvitation, api.Raw, error) {
				return s.client.Invite(ctx, team, api.InvitationCreate{Email: args[0], Role: role})
			}, func(team string, inv api.CreatedInvitation) error {
				s.ui.Printf("Invited %s to %s as %s; the invitation expires %s (id %s).\n", inv.Email, team, inv.Role, inv.ExpiresAt, inv.ID)
				return nil
			})
		},
	}
	invite.Flags().StringVar(&role, "role", "", "viewer, developer, admin or owner (owner only by an owner)")

	setRole := &cobra.Command{
		Use:     "set-role USERID ROLE",
		Short:   "Change a member's role",
		Example: "  tori members set-role ada@example.com admin --team acme",
		Args:    cobra.ExactArgs(2),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := roleArg(args[1]); err != nil {
				return err
			}
			return aboutTeam(s, cmd, func(ctx context.Context, team string) (api.Member, api.Raw, error) {
				id, err := s.memberID(ctx, team, args[0])
				if err != nil {
					return api.Member{}, nil, err
				}
				return s.client.SetMemberRole(ctx, team, id, args[1])
			}, func(team string, m api.Member) error {
				s.ui.Printf("%s is now %s of %s.\n", dash(m.Email), m.Role, team)
				return nil
			})
		},
	}

	remove := &cobra.Command{
		Use:     "remove USERID",
		Aliases: []string{"rm"},
		Short:   "Remove a member (or yourself: leaving); their tokens for the team stop at once",
		Example: "  tori members remove ada@example.com --team acme --yes",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			team, err := s.teamSlug(cmd.Context())
			if err != nil {
				return err
			}
			id, err := s.memberID(cmd.Context(), team, args[0])
			if err != nil {
				return err
			}
			if err := s.confirm("remove "+args[0]+" from "+team+" and revoke their tokens for it", args[0]); err != nil {
				return err
			}
			if err := s.client.RemoveMember(cmd.Context(), team, id); err != nil {
				return err
			}
			return s.done("Removed %s from %s.\n", args[0], team)
		},
	}
	c.AddCommand(list, invite, setRole, remove)
	return c
}

// memberID is who as a user id: an email is looked up among the team's members.
func (s *state) memberID(ctx context.Context, team, who string) (string, error) {
	if !strings.Contains(who, "@") {
		return who, nil
	}
	ms, _, err := s.client.ListMembers(ctx, team)
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if strings.EqualFold(m.Email, who) {
			return m.UserID, nil
		}
	}
	return "", fmt.Errorf("%s is not a member of %s: \"tori members --team %s\" lists them", who, team, team)
}

func (s *state) invitationsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "invitations",
		Aliases: []string{"invitation"},
		Short:   "Accept an invitation, or list and revoke a team's pending ones",
		Example: "  tori invitations accept 'https://console.tori.example/invitations/accept?token=…'\n" +
			"  tori invitations list --team acme\n  tori invitations revoke 0190… --team acme",
		Args: cobra.NoArgs,
	}
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the team's pending invitations",
		Example: "  tori invitations list --team acme",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutTeam(s, cmd, s.client.ListInvitations, func(team string, invs []api.Invitation) error {
				if len(invs) == 0 {
					s.ui.Printf("No pending invitations to %s.\n", team)
					return nil
				}
				w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, s.ui.Paint(ui.Bold, "ID\tEMAIL\tROLE\tINVITED BY\tEXPIRES"))
				for _, i := range invs {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", i.ID, i.Email, i.Role, dash(i.InvitedBy), i.ExpiresAt)
				}
				return w.Flush()
			})
		},
	}
	c.AddCommand(list, &cobra.Command{
		Use:     "revoke ID",
		Short:   "Revoke a pending invitation (its link stops working)",
		Example: "  tori invitations revoke 0190… --team acme",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			team, err := s.teamSlug(cmd.Context())
			if err != nil {
				return err
			}
			if err := s.client.RevokeInvitation(cmd.Context(), team, args[0]); err != nil {
				return err
			}
			return s.done("Revoked invitation %s to %s.\n", args[0], team)
		},
	}, &cobra.Command{
		Use:   "accept TOKEN",
		Short: "Accept an invitation (TOKEN: the code, or the whole link from the mail)",
		Long: "Joins the team the invitation names, as the person signed in; the invitation must have\n" +
			"been sent to your address. The API takes this from a sign-in session: where it refuses\n" +
			"a command-line token, open the link from the mail in the console instead.",
		Example: "  tori invitations accept 'https://console.tori.example/invitations/accept?token=…'",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			code := InvitationCode(args[0])
			if code == "" {
				return usagef("no invitation code in %q", args[0])
			}
			t, raw, err := s.client.AcceptInvitation(cmd.Context(), code)
			if err != nil {
				return err
			}
			if s.json {
				return s.printJSON(raw)
			}
			s.ui.Printf("Joined team %s as %s. Its apps: tori apps --team %s\n", s.ui.Paint(ui.Bold, t.Slug), t.Role, t.Slug)
			return nil
		},
	})
	return c
}

// InvitationCode is the code of an invitation given as the code itself or as the link the
// mail holds (…/invitations/accept?token=CODE).
func InvitationCode(arg string) string {
	arg = strings.TrimSpace(arg)
	if u, err := url.Parse(arg); err == nil && u.Scheme != "" {
		return u.Query().Get("token")
	}
	return arg
}
