package logs

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// Cursor is the position after which the next page starts: the last entry's timestamp and id.
// Paging by the pair, not by the timestamp alone, is what keeps a page boundary exact when
// many entries share one timestamp.
type Cursor struct {
	Timestamp time.Time
	ID        int64
}

// cursorWire is the cursor's encoded form. Microseconds match the store's precision, so the
// decoded timestamp compares equal to the stored one.
type cursorWire struct {
	T int64 `json:"t"`
	I int64 `json:"i"`
}

var errBadCursor = errors.New("logs: malformed cursor")

// Encode renders the cursor as the opaque `next` value: URL-safe base64 of a small JSON
// object, so it passes through a query string unescaped.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(cursorWire{T: c.Timestamp.UnixMicro(), I: c.ID})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses a value produced by Encode.
func DecodeCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, errBadCursor
	}
	var w cursorWire
	if err := json.Unmarshal(b, &w); err != nil || w.I <= 0 {
		return Cursor{}, errBadCursor
	}
	return Cursor{Timestamp: time.UnixMicro(w.T).UTC(), ID: w.I}, nil
}
