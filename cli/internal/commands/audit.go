package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
	"tori.dev/contract/apitime"
)

// ParseSpan reads a span as the command line takes it: N followed by d (days), h, m or s,
// or anything time.ParseDuration reads ("1h30m"). It must be positive.
func ParseSpan(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 {
			return 0, fmt.Errorf("%q: want a whole number of days, as in 30d", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a span such as 30d, 12h or 45m", s)
	}
	return d, nil
}

// ParseWhen reads a moment as a span before now (24h) or an RFC 3339 time, and gives it in
// the API's time format.
func ParseWhen(s string, now time.Time) (string, error) {
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(s)); err == nil {
		return apitime.Format(t), nil
	}
	d, err := ParseSpan(s)
	if err != nil {
		return "", fmt.Errorf("%v, or an RFC 3339 time", err)
	}
	return apitime.Format(now.Add(-d)), nil
}

// AuditFlags are `tori audit`'s flags, as typed.
type AuditFlags struct {
	Action, Actor, App, Since, Until string
	Limit                            int
	All                              bool
}

// ParseAudit checks the flags and makes the first page's query.
func ParseAudit(f AuditFlags, now time.Time) (api.AuditQuery, error) {
	q := api.AuditQuery{Action: strings.TrimSpace(f.Action), Actor: strings.TrimSpace(f.Actor), App: strings.TrimSpace(f.App), Limit: f.Limit}
	if f.Limit < 0 || f.Limit > 200 {
		return q, fmt.Errorf("--limit %d: want 1 to 200", f.Limit)
	}
	var err error
	if f.Since != "" {
		if q.Start, err = ParseWhen(f.Since, now); err != nil {
			return q, fmt.Errorf("--since %v", err)
		}
	}
	if f.Until != "" {
		if q.End, err = ParseWhen(f.Until, now); err != nil {
			return q, fmt.Errorf("--until %v", err)
		}
	}
	return q, nil
}

func (s *state) auditCmd() *cobra.Command {
	var f AuditFlags
	c := &cobra.Command{
		Use:   "audit",
		Short: "Show a team's audit log, newest first (admins)",
		Long: "Every change to the team's apps, members, tokens and billing, and every attempt its own\n" +
			"members and tokens were refused, with who, from where and the outcome. --actor is a user\n" +
			"id, a token id or an email. One page (--limit, default 50) unless --all, which follows\n" +
			"the cursor to the end of the window. How far back the log goes depends on the plan.",
		Example: "  tori audit --team acme\n  tori audit --team acme --since 24h --action app.delete\n" +
			"  tori audit --team acme --actor ada@example.com --app web --all",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := ParseAudit(f, time.Now())
			if err != nil {
				return usageError{err}
			}
			team, err := s.teamSlug(cmd.Context())
			if err != nil {
				return err
			}
			var entries []api.AuditEntry
			var last api.Raw
			var next *string
			for {
				page, raw, err := s.client.Audit(cmd.Context(), team, q)
				if err != nil {
					return err
				}
				entries, last, next = append(entries, page.Entries...), raw, page.NextCursor
				if !f.All || next == nil || *next == "" {
					break
				}
				q.Cursor = *next
			}
			if s.json {
				if !f.All {
					return s.printJSON(last)
				}
				b, err := json.Marshal(api.AuditPage{Entries: entries})
				if err != nil {
					return err
				}
				return s.printJSON(b)
			}
			return s.printAudit(team, entries, next)
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.Action, "action", "", "only this action, such as app.delete or env.set")
	fs.StringVar(&f.Actor, "actor", "", "only this actor: a user id, token id or email")
	fs.StringVar(&f.App, "app", "", "only entries about this app's slug")
	fs.StringVar(&f.Since, "since", "", "from this long ago (24h, 7d) or this RFC 3339 time")
	fs.StringVar(&f.Until, "until", "", "up to this long ago or this RFC 3339 time (default now)")
	fs.IntVar(&f.Limit, "limit", 0, "entries per page (1–200; default the API's 50)")
	fs.BoolVar(&f.All, "all", false, "follow the cursor to the last page")
	return c
}

// actorOf is an entry's actor in a word: the person's email, the token, or system.
func actorOf(a api.AuditActor) string {
	var parts []string
	if a.Email != nil && *a.Email != "" {
		parts = append(parts, *a.Email)
	} else if a.UserID != nil && *a.UserID != "" {
		parts = append(parts, *a.UserID)
	}
	if a.TokenID != nil && *a.TokenID != "" {
		parts = append(parts, "token "+*a.TokenID)
	}
	if len(parts) == 0 {
		return dash(a.Type)
	}
	return strings.Join(parts, ", ")
}

// metadataOf is the entry's metadata as k=v pairs in key order (keys only, never values of
// secrets: the API writes none).
func metadataOf(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%v", k, m[k])
	}
	return dash(b.String())
}

func (s *state) printAudit(team string, entries []api.AuditEntry, next *string) error {
	if len(entries) == 0 {
		s.ui.Printf("No audit entries for %s in this window.\n", team)
		return nil
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, s.ui.Paint(ui.Bold, "AT\tACTOR\tACTION\tTARGET\tAPP\tOUTCOME\tIP\tDETAILS"))
	for _, e := range entries {
		outcome := e.Outcome
		if outcome == "denied" {
			outcome = s.ui.Paint(ui.Red, outcome)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.At, actorOf(e.Actor), e.Action, dash(e.Target), deref(e.App), outcome, deref(e.IP), metadataOf(e.Metadata))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if next != nil && *next != "" {
		fmt.Fprintln(s.env.Stderr, "More entries: add --all, or narrow with --since, --action, --actor or --app.")
	}
	return nil
}

// errExpires is the --expires usage, shared by its checks.
var errExpires = errors.New("--expires: want a span such as 30d, 12h or 45m, or an RFC 3339 time")
