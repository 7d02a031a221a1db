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
}
