package httpapi

import (
	"strconv"
	"time"

	"tori.dev/services/logs/internal/app"
	"tori.dev/services/logs/internal/logs"
)

// jsonTime is the contract's timestamp form: RFC 3339, UTC, milliseconds.
const jsonTime = "2006-01-02T15:04:05.000Z07:00"

// pageJSON is the log response of the contract.
type pageJSON struct {
	RetentionDays int         `json:"retentionDays"`
	Start         string      `json:"start"`
	End           string      `json:"end"`
	Entries       []entryJSON `json:"entries"`
	Next          *string     `json:"next"`
}

type entryJSON struct {
	// A string, like every id of the API, and because a bigint outgrows a JSON number's
	// exact range in some clients.
	ID        string  `json:"id"`
	Timestamp string  `json:"timestamp"`
	Stream    string  `json:"stream"`
	DeployID  *string `json:"deployId"`
	Message   string  `json:"message"`
}

func pageToJSON(p app.Page) pageJSON {
	out := pageJSON{
		RetentionDays: p.RetentionDays,
		Start:         formatTime(p.Start),
		End:           formatTime(p.End),
		Entries:       make([]entryJSON, len(p.Entries)),
	}
	for i, e := range p.Entries {
		out.Entries[i] = entryToJSON(e)
	}
	if p.Next != nil {
		next := p.Next.Encode()
		out.Next = &next
	}
	return out
}

func entryToJSON(e logs.Entry) entryJSON {
	j := entryJSON{
		ID:        strconv.FormatInt(e.ID, 10),
		Timestamp: formatTime(e.Timestamp),
		Stream:    string(e.Stream),
		Message:   e.Message,
	}
	if e.DeployID != "" {
		d := e.DeployID
		j.DeployID = &d
	}
	return j
}

func formatTime(t time.Time) string {
	return t.UTC().Format(jsonTime)
}
