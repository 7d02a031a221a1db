// Package audit is a team's audit log as identity keeps it: the entries every service
// records of its changes and refusals, how the log is read (newest first, a page at a time)
// and how long a plan keeps it. It does no I/O.
package audit

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Entry is one change, or one refused attempt, in a team.
type Entry struct {
	ID        string
	TeamID    string
	At        time.Time
	ActorType string // user, token or system
	UserID    string
	Email     string // the user's address when the entry was recorded
	TokenID   string
	Action    string
	Target    string
	App       string
	IP        string
	Outcome   string // success or denied
	Metadata  map[string]string
}

// Page sizes of a read.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// DefaultRetentionDays is nestling's retention, used until identity holds a team's plan.
const DefaultRetentionDays = 7

// retentionSlack forgives a start computed by a client as "retention ago" that arrives a
// moment later than it was computed.
const retentionSlack = time.Minute

var (
	// ErrBeyondRetention: the read starts before the oldest entry the plan keeps.
	ErrBeyondRetention = errors.New("audit: start is beyond the plan's retention")
	// ErrInvalidCursor: a cursor this service did not make.
	ErrInvalidCursor = errors.New("audit: invalid cursor")
)

// Cursor is where a page ends: the last entry's time and id, so the next page starts just
// after it even when several entries share a time.
type Cursor struct {
	At time.Time
	ID string
}

// String is the cursor as the client holds it: opaque, URL-safe.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.At.UnixMicro(), 10) + "." + c.ID))
}

// ParseCursor reads a cursor String made.
func ParseCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, ErrInvalidCursor
	}
	micros, id, ok := strings.Cut(string(b), ".")
	us, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || uuid.Validate(id) != nil {
		return Cursor{}, ErrInvalidCursor
	}
	return Cursor{At: time.UnixMicro(us).UTC(), ID: id}, nil
}

// Query is one read of a team's log. Zero values filter nothing.
type Query struct {
	TeamID string
	Start  time.Time // inclusive
	End    time.Time // exclusive
	Action string
	// Actor matches an entry's user id, token id or email.
	Actor string
	App   string
	Limit int
	After *Cursor
}

// Window applies a team's retention to q at now: a start older than the plan keeps is
// ErrBeyondRetention; no start reads from the oldest entry kept (entries past retention
// that the prune has not reached yet are not shown).
func (q Query) Window(retentionDays int, now time.Time) (Query, error) {
	if retentionDays <= 0 {
		retentionDays = DefaultRetentionDays
	}
	floor := now.Add(-time.Duration(retentionDays) * 24 * time.Hour)
	if q.Start.IsZero() {
		q.Start = floor
	} else if q.Start.Before(floor.Add(-retentionSlack)) {
		return Query{}, ErrBeyondRetention
	}
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	q.Limit = min(q.Limit, MaxLimit)
	return q, nil
}
