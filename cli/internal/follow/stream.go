package follow

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"tori.dev/cli/internal/api"
)

// Event is one Server-Sent Event.
type Event struct {
	ID, Event, Data string
}

// ReadEvents parses Server-Sent Events from r, calling fn for each event that carries data
// (comments, such as heartbeats, and bare `retry:` fields are skipped), until r ends or fn
// fails. Multi-line data is joined with newlines, as the standard says.
func ReadEvents(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var (
		ev   Event
		data []string
	)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if len(data) > 0 {
				ev.Data = strings.Join(data, "\n")
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data = Event{}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Event = value
		case "data":
			data = append(data, value)
		}
	}
	return sc.Err()
}

// Closed is the stream's final event: why the service or the gateway ended it.
type Closed struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// final reports whether reconnecting after c is pointless: the app is gone, the token was
// revoked or reached its end, or every line up to the asked end was sent.
func (c Closed) final() bool {
	switch c.Reason {
	case "app_deleted", "token_revoked", "token_expired", "end_reached":
		return true
	}
	return false
}

// ErrStreamEnded is returned when the stream ended for good (Closed.final); it wraps the
// server's message.
var ErrStreamEnded = errors.New("the log stream ended")

// Open opens the stream, resuming after lastEventID when it is set.
type Open func(ctx context.Context, lastEventID string) (io.ReadCloser, error)

// Stream follows a log stream, reconnecting with backoff and resuming with Last-Event-ID,
// so every line is passed to Line once, in the order sent.
type Stream struct {
	Open Open
	Line func(api.LogEntry)
	// Notice tells the user about reconnecting (nil: silent).
	Notice func(string)
	// Sleep waits (tests replace it).
	Sleep func(context.Context, time.Duration) error
	// MinBackoff and MaxBackoff bound the wait before reconnecting: it doubles from the
	// first to the second after each failure and starts over after an event arrives.
	MinBackoff, MaxBackoff time.Duration

	lastID string
}

// Run follows until ctx ends (nil), the stream ends for good (ErrStreamEnded wrapping the
// reason), or the API refuses it for a reason a retry will not change (its *api.Error: 400,
// 401, 403, 404, 410).
func (s *Stream) Run(ctx context.Context) error {
	backoff := s.minBackoff()
	for {
		body, err := s.Open(ctx, s.lastID)
		if ctx.Err() != nil {
			return nil
		}
		var got bool
		if err == nil {
			var closed *Closed
			got, closed, err = s.read(body)
			body.Close()
			if ctx.Err() != nil {
				return nil
			}
			if closed != nil && closed.final() {
				return fmt.Errorf("%w: %s", ErrStreamEnded, closed.Message)
			}
			if closed != nil && s.Notice != nil {
				s.Notice(closed.Message)
			}
		} else if permanent(err) {
			return err
		}
		if got {
			backoff = s.minBackoff()
		}
		if err != nil && s.Notice != nil {
			s.Notice(fmt.Sprintf("log stream interrupted (%v); reconnecting in %s", err, backoff))
		}
		if err := s.sleep(ctx, backoff); err != nil {
			return nil
		}
		backoff = min(backoff*2, s.maxBackoff())
	}
}

// read passes the stream's lines on until it ends; got says whether any event came.
func (s *Stream) read(body io.Reader) (got bool, closed *Closed, err error) {
	err = ReadEvents(body, func(ev Event) error {
		got = true
		if ev.Event == "close" {
			closed = &Closed{}
			_ = json.Unmarshal([]byte(ev.Data), closed)
			return io.EOF
		}
		if ev.Event != "" && ev.Event != "message" {
			return nil // a kind this client does not know yet
		}
		var e api.LogEntry
		if json.Unmarshal([]byte(ev.Data), &e) != nil {
			return nil
		}
		if ev.ID != "" {
			s.lastID = ev.ID
		}
		s.Line(e)
		return nil
	})
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return got, closed, err
}

// permanent reports whether an error answer will not change by retrying.
func permanent(err error) bool {
	var apiErr *api.Error
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.Status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		return true
	}
	return false
}

// LastEventID is the id the next reconnection resumes after.
func (s *Stream) LastEventID() string { return s.lastID }

func (s *Stream) minBackoff() time.Duration {
	if s.MinBackoff > 0 {
		return s.MinBackoff
	}
	return 500 * time.Millisecond
}

func (s *Stream) maxBackoff() time.Duration {
	if s.MaxBackoff > 0 {
		return s.MaxBackoff
	}
	return 15 * time.Second
}

func (s *Stream) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
