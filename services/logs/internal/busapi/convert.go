package busapi

import (
	"strings"

	"github.com/google/uuid"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	"tori.dev/services/logs/internal/logs"
)

// Why an entry was not kept; counted per batch in one warning.
const (
	rejectAppID    = "bad_app_id"
	rejectDeployID = "bad_deploy_id"
	rejectStream   = "bad_stream"
	rejectNoTime   = "no_timestamp"
)

// entryFromWire turns a zone's entry into a domain entry, or names why it breaks the
// contract's shape (how old or new it may be is the ingest use case's rule). A malformed
// entry is dropped alone: failing the message would dead-letter every good line batched
// with it.
func entryFromWire(w *logsv1.LogEntry) (logs.Entry, string) {
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
	return logs.Entry{
		AppID:      app.String(),
		DeployID:   deploy,
		Stream:     stream,
		Timestamp:  ts,
		Message:    cleanText(w.GetMessage()),
		Redactions: w.GetRedactions(),
		Process:    processFromWire(w.GetProcess()),
	}, ""
}

// processFromWire keeps a well-formed process name. A malformed one (a zone's bug) is dropped
// but its line kept: the output matters more than its label, and an unchecked name could not
// be asked for with ?process= anyway.
func processFromWire(p string) string {
	if p == "" || !logs.ValidProcess(p) {
		return ""
	}
	return p
}

// cleanText makes a line storable: Postgres text cannot hold NUL, and one would fail the
// COPY of the whole batch. (Invalid UTF-8 cannot arrive: proto3 strings refuse it.)
func cleanText(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}
