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
	var since string
	var followFlag bool
	c := &cobra.Command{
		Use:   "logs",
		Short: "Print the app's log lines, and with --follow keep printing new ones",
		Long: "Prints the lines of the last --since (default 1h), oldest first. --follow keeps polling;\n" +
			"each line is printed once, and a line that reaches the logs up to 10 s after its own\n" +
			"timestamp is not missed. --json prints one JSON line (the API's entry) per log line.",
		Example: "  tori logs --app my-api\n  tori logs --since 15m --follow\n  tori logs --since 2d --json | jq .message",
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
			f := follow.New(time.Now().Add(-window))
			fetch := func(ctx context.Context, q api.LogQuery) (api.LogPage, error) {
				p, _, err := s.client.Logs(ctx, slug, q)
				return p, err
			}
			for {
				lines, err := f.Poll(ctx, fetch, time.Now())
				for _, e := range lines {
					if s.json {
						b, _ := json.Marshal(e)
						fmt.Fprintln(s.env.Stdout, string(b))
					} else {
						s.printLine(e, true)
					}
				}
				if err != nil {
					return err
				}
				if !followFlag {
					return nil
				}
				if err := s.sleep(ctx, s.pollEvery()); err != nil {
					if errors.Is(err, context.Canceled) {
						return nil
					}
					return err
				}
			}
		},
	}
	s.appFlag(c, false)
	c.Flags().StringVar(&since, "since", "1h", "how far back to start (30m, 1h, 2d)")
	c.Flags().BoolVarP(&followFlag, "follow", "f", false, "keep printing new lines")
	return c
}
