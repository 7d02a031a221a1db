package events

import (
	"strings"
	"time"

	"github.com/google/uuid"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	"tori.dev/services/logs/internal/logs"
)

// maxAhead bounds how far in the future a zone's clock may stamp a line. Further out, the
// line would sit in a partition created for a day that retention would not reach for
// months.
const maxAhead = 24 * time.Hour

// Why an entry was not kept; counted per batch in one warning.
const (
	rejectAppID    = "bad_app_id"
	rejectDeployID = "bad_deploy_id"
	rejectStream   = "bad_stream"
	rejectNoTime   = "no_timestamp"
	rejectTooOld   = "older_than_retention"
	rejectTooNew   = "too_far_ahead"
)

// entryFromWire turns a zone's entry into a domain entry, or names why it breaks the
// contract. A malformed entry is dropped alone: failing the message would dead-letter every
// good line batched with it.
func entryFromWire(w *logsv1.LogEntry, oldest, newest time.Time) (logs.Entry, string) {
	app, err := uuid.Parse(w.GetAppId())
	if err != nil {
		return logs.Entry{}, rejectAppID
	}
	deploy := ""
	if w.GetDeployId() != "" {
		d, err := uuid.Parse(w.GetDeployId())
		if err != nil {
			return logs.Entry{}, rejectDeployID
		}
		deploy = d.String()
	}
	stream := logs.Stream(w.GetStream())
	if !stream.Valid() {
		return logs.Entry{}, rejectStream
	}
	if w.GetTimestamp() == nil {
		return logs.Entry{}, rejectNoTime
	}
	ts := w.GetTimestamp().AsTime()
	if ts.Before(oldest) {
		return logs.Entry{}, rejectTooOld
	}
	if ts.After(newest) {
		return logs.Entry{}, rejectTooNew
	}
	return logs.Entry{
		AppID:      app.String(),
		DeployID:   deploy,
		Stream:     stream,
		Timestamp:  ts,
		Message:    cleanText(w.GetMessage()),
		Redactions: w.GetRedactions(),
	}, ""
}

// cleanText makes a line storable: Postgres text cannot hold NUL, and one would fail the
// COPY of the whole batch. (Invalid UTF-8 cannot arrive: proto3 strings refuse it.)
func cleanText(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}
