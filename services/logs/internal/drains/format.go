package drains

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"tori.dev/contract/apitime"
	"tori.dev/services/logs/internal/logs"
)

// line is one NDJSON line: the entry as the logs API shows it, plus the app's slug.
type line struct {
	ID        string  `json:"id"`
	Timestamp string  `json:"timestamp"`
	Stream    string  `json:"stream"`
	DeployID  *string `json:"deployId"`
	Message   string  `json:"message"`
	Process   *string `json:"process"`
	App       string  `json:"app"`
}

// NDJSON is the body of an HTTPS batch: one JSON object per entry, each ending in "\n".
func NDJSON(slug string, entries []logs.Entry) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		l := line{
			ID: strconv.FormatInt(e.ID, 10), Timestamp: apitime.Format(e.Timestamp),
			Stream: string(e.Stream), Message: e.Message, App: slug,
		}
		if e.DeployID != "" {
			d := e.DeployID
			l.DeployID = &d
		}
		if e.Process != "" {
			p := e.Process
			l.Process = &p
		}
		_ = enc.Encode(l) // plain strings and pointers to them: cannot fail
	}
	return b.Bytes()
}

// Syslog is an entry as one RFC 5424 message, framed by octet counting (RFC 6587 3.4.1):
// "<len> <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [tori@0 id="…"] MSG". Facility user
// (1); severity error (3) for stderr, informational (6) otherwise. HOSTNAME is "tori".
func Syslog(slug string, e logs.Entry) []byte {
	sev := 6
	if e.Stream == logs.StreamStderr {
		sev = 3
	}
	procid := e.Process
	if procid == "" {
		procid = "-"
	}
	var m strings.Builder
	m.WriteString("<" + strconv.Itoa(8+sev) + ">1 ")
	m.WriteString(apitime.Format(e.Timestamp))
	m.WriteString(" tori ")
	m.WriteString(syslogName(slug, 48))
	m.WriteString(" ")
	m.WriteString(syslogName(procid, 128))
	m.WriteString(" ")
	m.WriteString(syslogName(string(e.Stream), 32))
	m.WriteString(` [tori@0 id="` + strconv.FormatInt(e.ID, 10) + `"] `)
	m.WriteString(e.Message)
	msg := m.String()
	return []byte(strconv.Itoa(len(msg)) + " " + msg)
}

// syslogName keeps a header field within RFC 5424's PRINTUSASCII and length.
func syslogName(s string, max int) string {
	b := []byte(s)
	for i, c := range b {
		if c < 33 || c > 126 {
			b[i] = '_'
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	if len(b) == 0 {
		return "-"
	}
	return string(b)
}
