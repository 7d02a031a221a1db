package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/follow"
	"tori.dev/contract/names"
)

// ParseSince reads a --since value: a Go duration (90m, 1h30m) or whole days (2d).
func ParseSince(v string) (time.Duration, error) {
	if strings.HasSuffix(v, "d") {
		n, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
		if err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--since %q: want a duration such as 30m, 1h or 2d", v)
	}
	return d, nil
}

func (s *state) logsCmd() *cobra.Command {
	var since, process string
	var followFlag bool
	c := &cobra.Command{
		Use:   "logs",
		Short: "Print the app's log lines, and with --follow keep printing new ones",
		Long: "Prints the lines of the last --since (default 1h), oldest first. --follow then keeps the\n" +
			"live stream open: new lines print as they arrive (within about a second), each once; a\n" +
			"dropped connection is reopened with backoff and resumes where it stopped. --json prints\n" +
			"one JSON line (the API's entry) per log line.",
		Example: "  tori logs --app my-api\n  tori logs --since 15m --follow\n  tori logs --process worker\n  tori logs --since 2d --json | jq .message",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			slug, err := s.slug()
			if err != nil {
				return err
			}
			window, err := ParseSince(since)
			if err != nil {
				return usageError{err}
			}
			// Checked here, a mistake is a usage error rather than the API's 400.
			if process != "" && !names.ProcessFilter(process) {
				return usagef("--process %q: want a process type (web, worker, cron) or one instance (worker.2)", process)
			}
			since := time.Now().Add(-window)
			if followFlag {
				return s.followLogs(ctx, slug, process, since)
			}
			f := follow.New(since)
			fetch := func(ctx context.Context, q api.LogQuery) (api.LogPage, error) {
				q.Process = process
				p, _, err := s.client.Logs(ctx, slug, q)
				return p, err
			}
			lines, err := f.Poll(ctx, fetch, time.Now())
			for _, e := range lines {
				s.printEntry(e)
			}
			return err
		},
	}
	s.appFlag(c, false)
	c.Flags().StringVar(&since, "since", "1h", "how far back to start (30m, 1h, 2d)")
	c.Flags().BoolVarP(&followFlag, "follow", "f", false, "keep printing new lines")
	c.Flags().StringVar(&process, "process", "", "only one process type's lines (worker, cron) or one instance's (worker.2)")
	return c
}

// printEntry prints one line of `tori logs`: the API's entry with --json, else stamped.
func (s *state) printEntry(e api.LogEntry) {
	if s.json {
		b, _ := json.Marshal(e)
		fmt.Fprintln(s.env.Stdout, string(b))
		return
	}
	s.printLine(e, true)
}

// followLogs prints the lines from since on and then new ones until Ctrl-C (exit 130 is the
// root's), the app is deleted or the token revoked.
func (s *state) followLogs(ctx context.Context, slug, process string, since time.Time) error {
	lines := make(chan api.LogEntry, 256)
	done := make(chan error, 1)
	go func() { done <- s.followLines(ctx, slug, process, since, lines, s.streamNotice) }()
	for {
		select {
		case e := <-lines:
			s.printEntry(e)
		case err := <-done:
			for {
				select {
				case e := <-lines:
					s.printEntry(e)
					continue
				default:
				}
				break
			}
			if errors.Is(err, follow.ErrStreamEnded) {
				fmt.Fprintln(s.env.Stderr, err.Error())
				return nil
			}
			if err == nil && ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
	}
}
