package httpapi

import (
	"bytes"
	"encoding/json"
	"sync"

	"tori.dev/contract/apitime"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// pageJSON is the contract's log response (shared/spec/control-plane-api.md, "Log response").
type pageJSON struct {
	RetentionDays int          `json:"retentionDays"`
	Start         apitime.Time `json:"start"`
	End           apitime.Time `json:"end"`
	Entries       []entryJSON  `json:"entries"` // [] when empty, never null
	Next          *string      `json:"next"`
}

// entryJSON is one log line of the response. Ids are strings, like every id of the API, and
// because a bigint outgrows a JSON number's exact range in some clients. The timestamp is
// apitime's form as a plain string: apitime.Time goes through MarshalJSON, whose output
// encoding/json re-validates, and over 500 entries that doubled the page's encoding time.
type entryJSON struct {
	ID        int64       `json:"id,string"`
	Timestamp string      `json:"timestamp"` // apitime.Format
	Stream    logs.Stream `json:"stream"`
	DeployID  *string     `json:"deployId"` // null when the line belongs to no deploy
	Message   string      `json:"message"`
	Process   *string     `json:"process"` // null when no instance wrote the line
}

// pageEncoder holds what encoding a page needs between requests: a full page is about
// 120 kB of JSON and 500 entries, which would otherwise be fresh allocations per read.
type pageEncoder struct {
	buf  bytes.Buffer
	enc  *json.Encoder
	page pageJSON
}

var pageEncoders = sync.Pool{New: func() any {
	e := &pageEncoder{}
	e.buf.Grow(64 << 10)
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

// maxPooledPage keeps an outsized page's buffer (long messages) from being held forever.
const maxPooledPage = 1 << 20

// encodePage hands write the JSON of p, then recycles the bytes: write must not keep them.
// encoding/json's defaults are the answer's: <, > and & escaped (safe to embed in HTML),
// invalid UTF-8 as U+FFFD.
func encodePage(p usecase.Page, write func([]byte)) error {
	e := pageEncoders.Get().(*pageEncoder)
	defer func() {
		clear(e.page.Entries) // drop the messages' strings before the encoder waits in the pool
		e.page = pageJSON{Entries: e.page.Entries[:0]}
		if e.buf.Cap() <= maxPooledPage {
			pageEncoders.Put(e)
		}
	}()
	e.page.RetentionDays = p.RetentionDays
	e.page.Start, e.page.End = apitime.Time(p.Start), apitime.Time(p.End)
	if e.page.Entries == nil {
		e.page.Entries = make([]entryJSON, 0, len(p.Entries))
	}
	for i := range p.Entries {
		src := &p.Entries[i]
		en := entryJSON{ID: src.ID, Timestamp: apitime.Format(src.Timestamp), Stream: src.Stream, Message: src.Message}
		if src.DeployID != "" {
			en.DeployID = &src.DeployID
		}
		if src.Process != "" {
			en.Process = &src.Process
		}
		e.page.Entries = append(e.page.Entries, en)
	}
	if p.Next != nil {
		next := p.Next.Encode()
		e.page.Next = &next
	}
	e.buf.Reset()
	if err := e.enc.Encode(&e.page); err != nil {
		return err
	}
	write(bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'})) // Encode ends with a newline; the answer did not
	return nil
}
