package httpapi

import (
	"bufio"
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"tori.dev/pkg/accessgate"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// StreamLimits are a live stream's timings (LOGS_STREAM_*).
type StreamLimits struct {
	// Poll is how often the table is read for new entries.
	Poll time.Duration
	// Heartbeat is the longest quiet spell before a comment line is sent.
	Heartbeat time.Duration
	// Idle closes a stream that sent no entry for this long; Lifetime closes any stream this
	// long after it opened. The client reconnects with Last-Event-ID either way.
	Idle, Lifetime time.Duration
	// LivenessEvery is how often the app's existence is checked (a deletion closes the
	// stream within about this long).
	LivenessEvery time.Duration
	// Retry is the reconnection delay suggested to EventSource clients.
	Retry time.Duration
}

// DefaultStreamLimits are the service's defaults; config overrides all but Retry and
// LivenessEvery.
var DefaultStreamLimits = StreamLimits{
	Poll:          250 * time.Millisecond,
	Heartbeat:     15 * time.Second,
	Idle:          30 * time.Minute,
	Lifetime:      time.Hour,
	LivenessEvery: time.Second,
	Retry:         2 * time.Second,
}

// streamWriteSlack is how much longer than a stream's lifetime its connection may be written
// to; the stream itself ends at its lifetime.
const streamWriteSlack = time.Minute

type streamHandler struct {
	streamer *usecase.Streamer
	limits   StreamLimits
	stopping context.Context
	log      *slog.Logger
}

// isStreamRequest reports whether h is a stream's request, the one exempt from the
// per-request write timeout.
func isStreamRequest(h *fasthttp.RequestHeader) bool {
	path, _, _ := strings.Cut(string(h.RequestURI()), "?")
	return string(h.Method()) == fiber.MethodGet && strings.HasPrefix(path, "/api/apps/") && strings.HasSuffix(path, "/logs/stream")
}

// get serves GET /api/apps/{slug}/logs/stream: the app and parameters are checked (404,
// 400, 410 as the window route answers them) before the first byte, then the stream runs
// after the handler returns.
func (h *streamHandler) get(c *fiber.Ctx) error {
	raw := logs.RawStreamQuery{
		Start:       c.Query("start"),
		End:         c.Query("end"),
		Cursor:      c.Query("cursor"),
		LastEventID: c.Get("Last-Event-ID"),
		Process:     c.Query("process"),
	}
	tail, err := h.streamer.Open(c.UserContext(), accessgate.Team(c), c.Params("slug"), raw)
	if err != nil {
		return toHTTP(err)
	}
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no") // nginx-style proxies in front must not buffer it
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		newStreamRun(h, tail, w).run(h.stopping)
	})
	return nil
}

// streamRun is one stream's loop state.
type streamRun struct {
	h         *streamHandler
	tail      *usecase.Tail
	w         *bufio.Writer
	buf       []byte
	opened    time.Time
	lastEntry time.Time
	lastWrite time.Time
	lastLive  time.Time
}

func newStreamRun(h *streamHandler, tail *usecase.Tail, w *bufio.Writer) *streamRun {
	now := time.Now()
	return &streamRun{h: h, tail: tail, w: w, buf: make([]byte, 0, 8<<10), opened: now, lastEntry: now, lastWrite: now, lastLive: now}
}

// flush sends what is buffered; false when the client is gone.
func (r *streamRun) flush() bool {
	if len(r.buf) == 0 {
		return true
	}
	_, err := r.w.Write(r.buf)
	r.buf = r.buf[:0]
	if err == nil {
		err = r.w.Flush()
	}
	r.lastWrite = time.Now()
	return err == nil
}

func (r *streamRun) close(reason string) {
	r.buf = appendCloseEvent(r.buf, reason)
	r.flush()
}

// run polls until the stream ends: the client leaves (a failed write, at the latest on
// the next heartbeat), the app is deleted, a limit is reached or the service stops.
func (r *streamRun) run(ctx context.Context) {
	r.buf = appendRetry(r.buf, r.h.limits.Retry)
	if !r.flush() {
		return
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			r.close(ReasonShutdown)
			return
		case <-timer.C:
		}
		reason, full := r.step(ctx, time.Now())
		if !r.flush() {
			return
		}
		if reason != "" {
			r.close(reason)
			return
		}
		next := r.h.limits.Poll
		if full {
			next = 0 // a backlog: read on at once
		}
		timer.Reset(next)
	}
}

// step polls once and buffers what is to be sent; reason is set when the stream must end.
func (r *streamRun) step(ctx context.Context, now time.Time) (reason string, full bool) {
	events, full, err := r.tail.Poll(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ReasonShutdown, false
		}
		r.h.log.ErrorContext(ctx, "log stream poll failed", "err", err.Error())
		return ReasonError, false
	}
	for _, ev := range events {
		r.buf = appendEntryEvent(r.buf, ev.ID, ev.Entry)
	}
	if len(events) > 0 {
		r.lastEntry = now
	}
	if now.Sub(r.lastLive) >= r.h.limits.LivenessEvery {
		r.lastLive = now
		live, err := r.tail.Live(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return ReasonShutdown, false
		case err != nil:
			r.h.log.ErrorContext(ctx, "log stream liveness check failed", "err", err.Error())
			return ReasonError, false
		case !live:
			return ReasonAppDeleted, false
		}
	}
	switch {
	case full:
		return "", true
	case r.tail.Ended(now):
		return ReasonEnd, false
	case now.Sub(r.opened) >= r.h.limits.Lifetime:
		return ReasonLifetime, false
	case now.Sub(r.lastEntry) >= r.h.limits.Idle:
		return ReasonIdle, false
	}
	if len(r.buf) == 0 && now.Sub(r.lastWrite) >= r.h.limits.Heartbeat {
		r.buf = appendHeartbeat(r.buf, now)
	}
	return "", false
}
