package logs

import (
	"slices"
	"time"
)

// Stream names where a line came from.
type Stream string

// The streams of the contract.
const (
	StreamStdout  Stream = "stdout"
	StreamStderr  Stream = "stderr"
	StreamBuild   Stream = "build"
	StreamRelease Stream = "release"
	StreamSystem  Stream = "system"
)

// Streams lists every stream of the contract.
var Streams = []Stream{StreamStdout, StreamStderr, StreamBuild, StreamRelease, StreamSystem}

// Valid reports whether s is one of the contract's streams.
func (s Stream) Valid() bool {
	return slices.Contains(Streams, s)
}

// Entry is one line of an app's output.
type Entry struct {
	ID         int64 // assigned by the store; orders entries that share a timestamp
	AppID      string
	DeployID   string // empty when the line belongs to no deploy
	Stream     Stream
	Timestamp  time.Time
	Message    string
	Redactions int32
	// Process is the instance that wrote the line (web.1, worker.2, cron.<job>.<run id>);
	// empty for lines of no instance (build, release, system).
	Process string
}

// Day is the UTC day t falls in. Entries are kept and dropped by whole UTC days, so a day is
// the unit of storage and of retention.
func Day(t time.Time) time.Time {
	return t.UTC().Truncate(24 * time.Hour)
}

// App is the service's copy of an app: who owns which slug, and which zone hosts it.
type App struct {
	ID        string
	AccountID string
	Slug      string
	Zone      string // "" when not known
}

// Plan is the part of an account's plan the logs service needs. Version ranks copies: a
// lower one never replaces a higher one.
type Plan struct {
	AccountID     string
	Name          string
	RetentionDays int
	Version       int64
	// Drains is how many log drains each app may have (0 when the plan did not say).
	Drains int
}
