package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/follow"
)

// followLines sends slug's lines from since on (only process's, when it is set: `worker`,
// `worker.2`) to out until ctx ends or following is no longer possible. It reads the live stream (Server-Sent Events), reconnecting with backoff
// and resuming with Last-Event-ID; against an API without the stream (its route 404 while
// the window route answers) it polls the window route with the cursor instead. notice
// tells the user about interruptions.
func (s *state) followLines(ctx context.Context, slug, process string, since time.Time, out chan<- api.LogEntry, notice func(string)) error {
	q := url.Values{"start": {follow.Stamp(since)}}
	if process != "" {
		q.Set("process", process)
	}
	st := &follow.Stream{
		Open: func(ctx context.Context, lastID string) (io.ReadCloser, error) {
			return s.client.OpenLogStream(ctx, slug, q, lastID)
		},
		Line: func(e api.LogEntry) {
			select {
			case out <- e:
			case <-ctx.Done():
			}
		},
		Notice: notice,
	}
	err := st.Run(ctx)
	var apiErr *api.Error
	if st.LastEventID() != "" || !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		return err
	}
	// 404 on the stream: an older API, or no such app; the window route tells which.
	if _, _, werr := s.client.Logs(ctx, slug, api.LogQuery{Limit: 1, Process: process}); werr != nil {
		return werr
	}
	return s.pollLines(ctx, slug, process, since, out)
}

// pollLines is following without the stream: the window route every poll interval, from
// the newest line shown minus follow.Overlap, each id once.
func (s *state) pollLines(ctx context.Context, slug, process string, since time.Time, out chan<- api.LogEntry) error {
	f := follow.New(since)
	fetch := func(ctx context.Context, q api.LogQuery) (api.LogPage, error) {
		q.Process = process
		p, _, err := s.client.Logs(ctx, slug, q)
		return p, err
	}
	for {
		lines, err := f.Poll(ctx, fetch, time.Now())
		for _, e := range lines {
			select {
			case out <- e:
			case <-ctx.Done():
				return nil
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.sleep(ctx, s.pollEvery()); err != nil {
			return nil
		}
	}
}

// streamNotice writes a notice about the stream to standard error.
func (s *state) streamNotice(msg string) {
	fmt.Fprintf(s.env.Stderr, "(%s)\n", msg)
}
